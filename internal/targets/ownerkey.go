package targets

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// OwnerKeyEnv names the environment variable that points mongobench at an
// owner key file other than the one in the user's configuration directory:
// for a CI job or a team whose machines must recognise each other's
// databases (the shards of a distributed run with --shard-setup none, a
// database kept by one machine and reused by another). It holds a path,
// not the key itself, because the environment is inherited by the client
// adapters mongobench starts and is visible to other processes of the
// user.
const OwnerKeyEnv = "MONGOBENCH_OWNER_KEY_FILE"

// ownerKeySize is the length of the secret in bytes (SHA-256's block is
// larger, its output is this size; more adds nothing).
const ownerKeySize = 32

// OwnerKey is the secret with which mongobench signs the owner records of
// the databases it creates, so that only a mongobench holding the key can
// tell a database is its own: a record someone inserted, or copied from
// another database, does not verify, and mongobench then refuses to drop or
// write. The zero value is not usable; get one from LoadOwnerKey.
type OwnerKey struct {
	secret []byte

	// Path is the file the key came from, named in refusals so that the
	// user knows which key a database did not verify with; empty for a key
	// made in memory.
	Path string
}

// OwnerKeyPath returns the owner key file to use: $MONGOBENCH_OWNER_KEY_FILE
// when set, else mongobench/owner.key in the user's configuration directory
// ($XDG_CONFIG_HOME, else os.UserConfigDir).
func OwnerKeyPath(getenv func(string) string) (string, error) {
	if p := getenv(OwnerKeyEnv); p != "" {
		return p, nil
	}

	base := getenv("XDG_CONFIG_HOME")
	if base == "" {
		var err error
		if base, err = os.UserConfigDir(); err != nil {
			return "", fmt.Errorf("finding the configuration directory for mongobench's owner key (set %s): %w", OwnerKeyEnv, err)
		}
	}

	return filepath.Join(base, "mongobench", "owner.key"), nil
}

// LoadOwnerKey reads the key in path, creating it (64 hexadecimal digits
// from the system's random source, mode 0600, its directory 0700) if the
// file does not exist. Two mongobench processes starting at once on a new
// machine agree on one key: the file is put in place with a hard link,
// which fails when another process linked its key first, whose key is then
// read. A file that is not 64 hexadecimal digits (spaces and a final
// newline aside) is an error naming it.
func LoadOwnerKey(path string) (*OwnerKey, error) {
	k, err := readOwnerKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}

	if err := createOwnerKey(path); err != nil {
		return nil, err
	}

	return readOwnerKey(path)
}

// readOwnerKey parses the key file at path.
func readOwnerKey(path string) (*OwnerKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}

		return nil, fmt.Errorf("owner key %s: %w", path, err)
	}

	secret, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(secret) != ownerKeySize {
		return nil, fmt.Errorf("owner key %s: want %d hexadecimal digits on one line (remove the file to make a new key, "+
			"which disowns the databases signed with the old one)", path, 2*ownerKeySize)
	}

	return &OwnerKey{secret: secret, Path: path}, nil
}

// createOwnerKey writes a new random key to path unless a file is there.
func createOwnerKey(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the owner key's directory (or set %s): %w", OwnerKeyEnv, err)
	}

	secret := make([]byte, ownerKeySize)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("making an owner key: %w", err)
	}

	tmp, err := os.CreateTemp(dir, ".owner.key.*")
	if err != nil {
		return fmt.Errorf("creating the owner key %s (or set %s): %w", path, OwnerKeyEnv, err)
	}

	defer func() { _ = os.Remove(tmp.Name()) }()

	// CreateTemp makes the file 0600 already; Chmod says so for umasks
	// and file systems that would not.
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("creating the owner key %s: %w", path, err)
	}

	if _, err := tmp.WriteString(hex.EncodeToString(secret) + "\n"); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing the owner key %s: %w", path, err)
	}

	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the owner key %s: %w", path, err)
	}

	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating the owner key %s: %w", path, err)
	}

	return nil
}

// sign returns the HMAC-SHA256 of fields, each prefixed with its length so
// that no two lists of fields sign the same bytes.
func (k *OwnerKey) sign(fields ...string) []byte {
	m := hmac.New(sha256.New, k.secret)

	var n [8]byte

	for _, f := range fields {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write([]byte(f))
	}

	return m.Sum(nil)
}

// verify reports whether mac is fields' signature with k, in constant time.
func (k *OwnerKey) verify(mac []byte, fields ...string) bool {
	return hmac.Equal(mac, k.sign(fields...))
}

// where names the key for messages.
func (k *OwnerKey) where() string {
	if k.Path == "" {
		return "this mongobench's owner key"
	}

	return "the owner key " + k.Path
}
