package targets

import "context"

// KindEmbedded is FerretDB running inside mongobench on file-backed SQLite
// in a temporary directory.
const KindEmbedded = "embedded"

// KindEmbeddedMemory is FerretDB running inside mongobench on in-memory
// SQLite. See EmbeddedOptions.Memory for what it cannot do.
const KindEmbeddedMemory = "embedded-memory"

// embeddedKind registers KindEmbedded.
func embeddedKind() Kind {
	return Kind{
		Name:        KindEmbedded,
		Description: "FerretDB inside mongobench on SQLite files in a temporary directory",
		Launched:    true,
		Default:     true,
		setting:     errNoSettings,
		validate:    func(t TargetSpec) error { return onlyFields(t, false, false, false) },
		launch:      launchEmbedded,
	}
}

// embeddedMemoryKind registers KindEmbeddedMemory.
func embeddedMemoryKind() Kind {
	return Kind{
		Name:        KindEmbeddedMemory,
		Description: "FerretDB inside mongobench on in-memory SQLite",
		Launched:    true,
		setting:     errNoSettings,
		validate:    func(t TargetSpec) error { return onlyFields(t, false, false, false) },
		launch:      launchEmbedded,
	}
}

// launchEmbedded starts FerretDB on SQLite, in a file or in memory.
func launchEmbedded(ctx context.Context, l *Launched, opts LaunchOptions) error {
	e, err := StartEmbedded(ctx, EmbeddedOptions{
		Memory:  l.Spec.Kind == KindEmbeddedMemory,
		Logger:  opts.Logger,
		TempDir: opts.TempDir,
		DataDir: opts.DataDir,
	})
	if err != nil {
		return err
	}

	l.embedded = e
	l.URI = e.URI()
	l.Description = e.Description()
	// For in-memory SQLite these say that updates modifying documents
	// hang and that one operation runs per database at a time.
	l.Notes = e.Notes()
	l.MaxPoolSize = e.MaxPoolSize()

	return nil
}
