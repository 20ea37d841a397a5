package datagen

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the text generators, so that a typo cannot make values larger
// than BSON allows.
const (
	maxWords     = 10_000
	maxStringLen = 1 << 20
)

func compileWords(k *call) *compiled {
	n := k.intIn("count", 3, 1, maxWords)
	if !k.ok {
		return nil
	}

	return &compiled{gen: &wordsGen{n: int(n)}, elems: float64(n)}
}

func compileSentence(k *call) *compiled {
	n := k.intIn("words", 6, 1, maxWords)
	if !k.ok {
		return nil
	}

	return &compiled{gen: &wordsGen{n: int(n), sentence: true}, elems: float64(n)}
}

// wordsGen yields n random words separated by spaces; as a sentence, the
// first letter is upper case and a full stop ends it. gofakeit's own
// Sentence ignores the word count, hence this.
type wordsGen struct {
	n        int
	sentence bool
}

func (g *wordsGen) value(s *Scope) any {
	var b strings.Builder

	b.Grow(g.n * 8)

	for i := range g.n {
		w := s.faker.Word()

		if i > 0 {
			b.WriteByte(' ')
		} else if g.sentence {
			r, size := utf8.DecodeRuneInString(w)
			b.WriteRune(unicode.ToUpper(r))
			w = w[size:]
		}

		b.WriteString(w)
	}

	if g.sentence {
		b.WriteByte('.')
	}

	return b.String()
}

func compileString(k *call) *compiled {
	n := k.intIn("length", 16, 0, maxStringLen)
	if !k.ok {
		return nil
	}

	return &compiled{gen: stringGen(n), elems: 1 + float64(n/16)}
}

// alnum are the characters of ^string; 62 of them, so six random bits pick
// one with rejection of 62 and 63.
const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// stringGen yields strings of its length of random letters and digits.
type stringGen int

func (g stringGen) value(s *Scope) any {
	var b strings.Builder

	b.Grow(int(g))

	for b.Len() < int(g) {
		r := s.rng.Uint64()
		for range 10 {
			if i := r & 63; i < uint64(len(alnum)) && b.Len() < int(g) {
				b.WriteByte(alnum[i])
			}

			r >>= 6
		}
	}

	return b.String()
}
