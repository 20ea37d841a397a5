package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Index geometry of NewHistogram's histograms, derived from its constants:
// a resolution of SignificantDigits = 3 digits needs sub-buckets for values
// up to 2·10³, so 2^11 sub-buckets per bucket (half of them new in each
// bucket after the first), and a lowest value of 1 µs means unit magnitude 0.
// TestHistogramMatchesDense and TestEncodeMatchesLibrary hold these to the
// library's own computation.
const (
	subBucketHalfCountMagnitude = 10
	subBucketHalfCount          = 1 << subBucketHalfCountMagnitude
	subBucketMask               = 1<<(subBucketHalfCountMagnitude+1) - 1
)

// V2 format constants (HdrHistogram's published encoding): the cookies of
// the uncompressed and compressed forms, and the uncompressed header size.
const (
	v2Cookie           = hdrhistogram.V2EncodingCookieBase | 0x10
	v2CompressedCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
	v2HeaderSize       = 40
)

// compressors caches zlib writers between encodings. A BestCompression
// writer allocates close to a megabyte of tables, and a results file encodes
// one histogram per operation per interval: without the cache, writing the
// results of a run with thousands of operations spent most of its time
// allocating and collecting those tables. The cache holds no state that
// outlives an encoding (each writer is Reset before use).
var compressors = sync.Pool{
	New: func() any {
		// Only an invalid level is an error.
		w, _ := zlib.NewWriterLevel(nil, zlib.BestCompression)
		return w
	},
}

// countsIndex returns the flat counts index of value v (at least 1) in
// NewHistogram's geometry, as the V2 payload numbers buckets.
func countsIndex(v int64) int {
	bucket := 64 - bits.LeadingZeros64(uint64(v)|subBucketMask) - (subBucketHalfCountMagnitude + 1)
	sub := int(v >> bucket)
	return (bucket+1)<<subBucketHalfCountMagnitude + sub - subBucketHalfCount
}

// appendPayload appends h's V2 payload to dst: each bucket's count from the
// first to the last populated one, as a zigzag varint, with runs of empty
// buckets written as one negative count. It returns false if a count is too
// large for the 8-byte varint this writer handles (2^55, never reached by a
// latency histogram), leaving dst unchanged.
func appendPayload(dst []byte, h *Histogram) ([]byte, bool) {
	if h.Populated() == 0 {
		// The payload of an empty histogram is one zero count.
		return append(dst, 0), true
	}

	out := dst
	next := 0 // the next flat index to write

	for v, c := range h.ForEachBucket {
		i := countsIndex(v)
		switch zeros := i - next; {
		case zeros == 1:
			out = append(out, 0)
		case zeros > 1:
			out = binary.AppendUvarint(out, zigzag(-int64(zeros)))
		}

		z := zigzag(c)
		if z >= 1<<56 {
			return dst, false
		}

		out = binary.AppendUvarint(out, z)
		next = i + 1
	}

	return out, true
}

// histogramFromPayload rebuilds a histogram from appendPayload's output.
func histogramFromPayload(p []byte) (*Histogram, error) {
	h := NewHistogram()
	i := 0

	for len(p) > 0 {
		z, n := binary.Uvarint(p)
		if n <= 0 {
			return nil, errors.New("corrupt histogram payload")
		}

		p = p[n:]

		c := int64(z>>1) ^ -int64(z&1) //nolint:gosec // the zigzag mapping
		if c < 0 {
			i += int(-c)
			continue
		}

		if c > 0 {
			if err := h.RecordValues(valueAt(i), c); err != nil {
				return nil, fmt.Errorf("corrupt histogram payload: %w", err)
			}
		}

		i++
	}

	return h, nil
}

// valueAt is the lowest value of the bucket at flat counts index i, the
// inverse of countsIndex.
func valueAt(i int) int64 {
	bucket := i>>subBucketHalfCountMagnitude - 1
	sub := int64(i&(subBucketHalfCount-1)) + subBucketHalfCount

	if bucket < 0 {
		bucket, sub = 0, sub-subBucketHalfCount
	}

	return sub << bucket
}

// encode writes h in the V2 compressed base64 format, byte for byte what the
// library's encoder writes, with a cached compressor. It returns false for a
// histogram it cannot encode that way (one decoded from elsewhere, whose
// geometry may differ, or a count too large for appendPayload), which the
// caller then hands to the library.
func encode(h *Histogram) (string, bool) {
	if !h.native {
		return "", false
	}

	payload, ok := appendPayload(make([]byte, v2HeaderSize, v2HeaderSize+16+2*int(h.Populated())), h)
	if !ok {
		return "", false
	}

	hdr := payload[:v2HeaderSize]
	binary.BigEndian.PutUint32(hdr[0:], uint32(v2Cookie))
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(payload)-v2HeaderSize)) //nolint:gosec // at most a few hundred KB
	binary.BigEndian.PutUint32(hdr[8:], 0)                                 // normalizing index offset
	binary.BigEndian.PutUint32(hdr[12:], SignificantDigits)
	binary.BigEndian.PutUint64(hdr[16:], uint64(LowestLatency.Microseconds()))
	binary.BigEndian.PutUint64(hdr[24:], uint64(HighestLatency.Microseconds()))
	binary.BigEndian.PutUint64(hdr[32:], math.Float64bits(1))

	var out bytes.Buffer

	out.Write(make([]byte, 8))

	zw, _ := compressors.Get().(*zlib.Writer)
	zw.Reset(&out)
	// Writes to a bytes.Buffer do not fail.
	_, _ = zw.Write(payload)
	_ = zw.Close()
	compressors.Put(zw)

	b := out.Bytes()
	binary.BigEndian.PutUint32(b[0:], uint32(v2CompressedCookie))
	binary.BigEndian.PutUint32(b[4:], uint32(len(b)-8)) //nolint:gosec // as above

	return base64.StdEncoding.EncodeToString(b), true
}

// decompressors caches zlib readers between decodings, as compressors
// does writers: finish decodes a histogram per operation per interval.
var decompressors sync.Pool

// decode reads s if it is the V2 compressed base64 form of a histogram of
// NewHistogram's geometry, as encode writes it, into a native histogram
// (which encode then writes again with a cached compressor). It returns
// false for anything else, which the caller hands to the library: another
// geometry, or a form it does not parse (the library then says what is
// wrong with it).
//
// Why: a histogram decoded by the library is not native, so re-encoding
// it (as the results builder does when it merges interval points) went
// through the library's encoder, which allocates a new compressor of
// close to a megabyte each time; rebuilding the results of a long run log
// of many operations spent most of its time there.
func decode(s string) (*Histogram, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) < 8 || binary.BigEndian.Uint32(b[0:]) != uint32(v2CompressedCookie) {
		return nil, false
	}

	n := binary.BigEndian.Uint32(b[4:])
	if uint64(n) > uint64(len(b)-8) {
		return nil, false
	}

	src := bytes.NewReader(b[8 : 8+n])

	var zr io.ReadCloser
	if r, ok := decompressors.Get().(io.ReadCloser); ok {
		if rs, ok := r.(zlib.Resetter); ok && rs.Reset(src, nil) == nil {
			zr = r
		}
	}

	if zr == nil {
		if zr, err = zlib.NewReader(src); err != nil {
			return nil, false
		}
	}

	// The payload's length is bounded by the header before it is read: at
	// most one 9-byte varint per counts index of the geometry.
	var hdr [v2HeaderSize]byte
	if _, err := io.ReadFull(zr, hdr[:]); err != nil {
		return nil, false
	}

	plen := binary.BigEndian.Uint32(hdr[4:])
	if binary.BigEndian.Uint32(hdr[0:]) != uint32(v2Cookie) ||
		binary.BigEndian.Uint32(hdr[8:]) != 0 ||
		binary.BigEndian.Uint32(hdr[12:]) != SignificantDigits ||
		binary.BigEndian.Uint64(hdr[16:]) != uint64(LowestLatency.Microseconds()) ||
		binary.BigEndian.Uint64(hdr[24:]) != uint64(HighestLatency.Microseconds()) ||
		binary.BigEndian.Uint64(hdr[32:]) != math.Float64bits(1) ||
		plen > uint32(9*(countsIndex(HighestLatency.Microseconds())+1)) {
		return nil, false
	}

	payload := make([]byte, plen+1)
	got, err := io.ReadFull(zr, payload)
	if uint32(got) != plen || !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false
	}

	decompressors.Put(zr)

	h, err := histogramFromPayload(payload[:plen])
	if err != nil {
		return nil, false
	}

	return h, true
}

// zigzag maps a signed value to the unsigned one the V2 payload stores.
func zigzag(v int64) uint64 {
	return uint64((v << 1) ^ (v >> 63)) //nolint:gosec // the zigzag mapping
}
