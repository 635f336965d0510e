package authority

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Signing keys at rest (docs/authority.md "Signing keys at rest"): with a
// key-encryption key (KEK, 32 bytes) each private key is stored sealed
// with AES-256-GCM, its kid as additional data, so a copy of the database
// or a backup mints no token without the KEK. Rotating the KEK: start
// with the new one as KEK and the old one in OldKEKs; every key sealed
// (or stored plain) otherwise is sealed again under the new KEK at start.

// KEKSize is the length of a key-encryption key.
const KEKSize = 32

// sealedMagic starts a sealed private key (a plain one is 64 bytes of
// key, never this prefix by construction of the length check).
var sealedMagic = []byte("plk1:")

// ParseKEK reads a KEK as written in a KEK file or PLING_AUTHORITY_KEK:
// the standard base64 of 32 bytes, surrounding space ignored.
func ParseKEK(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(k) != KEKSize {
		return nil, errors.New("a KEK is the base64 of 32 random bytes (openssl rand -base64 32)")
	}
	return k, nil
}

// NewKEK returns a fresh KEK in its file form.
func NewKEK() string {
	k := make([]byte, KEKSize)
	_, _ = rand.Read(k)
	return base64.StdEncoding.EncodeToString(k) + "\n"
}

// ReadKEKFile reads a KEK file, refusing one that others may read.
func ReadKEKFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseKEK(string(b))
}

func seal(kek []byte, kid string, priv []byte) ([]byte, error) {
	g, err := gcm(kek)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append(append([]byte{}, sealedMagic...), nonce...)
	return g.Seal(out, nonce, priv, []byte(kid)), nil
}

func open(keks [][]byte, kid string, stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, sealedMagic) {
		if len(stored) != ed25519.PrivateKeySize {
			return nil, errors.New("a signing key in the store is malformed")
		}
		return stored, nil
	}
	if len(keks) == 0 {
		return nil, errors.New("the signing keys in the store are encrypted: the authority needs its KEK (--kek-file or PLING_AUTHORITY_KEK)")
	}
	body := stored[len(sealedMagic):]
	for _, kek := range keks {
		g, err := gcm(kek)
		if err != nil || len(body) < g.NonceSize() {
			continue
		}
		if p, err := g.Open(nil, body[:g.NonceSize()], body[g.NonceSize():], []byte(kid)); err == nil && len(p) == ed25519.PrivateKeySize {
			return p, nil
		}
	}
	return nil, errors.New("a signing key in the store cannot be decrypted with the KEK given (wrong KEK, or the old one is needed: --old-kek-file)")
}

func gcm(kek []byte) (cipher.AEAD, error) {
	if len(kek) != KEKSize {
		return nil, errors.New("authority: a KEK is 32 bytes")
	}
	b, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// sealedStore seals private keys on the way into the store and opens
// them on the way out; everything else passes through. With a KEK, a key
// stored plain is never used: anyone who can write the database could
// have put it there, and would hold its private half (Keys leaves it out
// and reports it to plain; NewServer refuses to start with one unless
// the operator says they are theirs, Config.SealPlainKeys).
type sealedStore struct {
	Store
	kek   []byte   // nil: keys are stored plain
	keks  [][]byte // kek first, then the old ones (to open)
	plain func(kid string)
}

// isPlain reports a private key stored without a seal.
func isPlain(stored []byte) bool { return !bytes.HasPrefix(stored, sealedMagic) }

func newSealedStore(st Store, kek []byte, old [][]byte) *sealedStore {
	s := &sealedStore{Store: st, kek: kek}
	if kek != nil {
		s.keks = append(s.keks, kek)
	}
	s.keks = append(s.keks, old...)
	return s
}

func (s *sealedStore) wrap(k SigningKey) (SigningKey, error) {
	if s.kek == nil {
		return k, nil
	}
	sealed, err := seal(s.kek, k.Kid, k.PrivateKey)
	k.PrivateKey = sealed
	return k, err
}

func (s *sealedStore) AddKey(ctx context.Context, k SigningKey) error {
	k, err := s.wrap(k)
	if err != nil {
		return err
	}
	return s.Store.AddKey(ctx, k)
}

func (s *sealedStore) RotateKey(ctx context.Context, nowMs, notAfterMs int64, k SigningKey) error {
	k, err := s.wrap(k)
	if err != nil {
		return err
	}
	return s.Store.RotateKey(ctx, nowMs, notAfterMs, k)
}

func (s *sealedStore) Keys(ctx context.Context, nowMs int64) ([]SigningKey, error) {
	keys, err := s.Store.Keys(ctx, nowMs)
	if err != nil {
		return nil, err
	}
	out := keys[:0]
	for _, k := range keys {
		if s.kek != nil && isPlain(k.PrivateKey) {
			if s.plain != nil {
				s.plain(k.Kid)
			}
			continue
		}
		if k.PrivateKey, err = open(s.keks, k.Kid, k.PrivateKey); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// ErrPlainKey is a start refused because the store holds a signing key
// stored plain while a KEK is set.
var ErrPlainKey = errors.New("authority: a signing key is stored plain although a KEK is set")

// reseal stores every key the store still publishes sealed under the
// current KEK: ones sealed under an old KEK, and, when sealPlain (the
// operator says they are theirs, from before a KEK was set), plain ones,
// each reported to sealed. A plain key without sealPlain refuses the
// start (ErrPlainKey, naming its kid). Run at start; a key another
// instance rewrote meanwhile is only sealed once more.
func (s *sealedStore) reseal(ctx context.Context, nowMs int64, sealPlain bool, sealed func(kid string)) error {
	if s.kek == nil {
		return nil
	}
	raw, err := s.Store.Keys(ctx, nowMs)
	if err != nil {
		return err
	}
	g, err := gcm(s.kek)
	if err != nil {
		return err
	}
	for _, k := range raw {
		if isPlain(k.PrivateKey) && !sealPlain {
			return fmt.Errorf("%w: kid %s. Anyone who can write the database could have put it there; if it is this authority's own, "+
				"from before the KEK was set, start once with --seal-plain-keys (Config.SealPlainKeys) to seal it, else delete it", ErrPlainKey, k.Kid)
		}
		if !isPlain(k.PrivateKey) {
			body := k.PrivateKey[len(sealedMagic):]
			if len(body) >= g.NonceSize() {
				if _, err := g.Open(nil, body[:g.NonceSize()], body[g.NonceSize():], []byte(k.Kid)); err == nil {
					continue // sealed under the current KEK already
				}
			}
		}
		priv, err := open(s.keks, k.Kid, k.PrivateKey)
		if err != nil {
			return err
		}
		material, err := seal(s.kek, k.Kid, priv)
		if err != nil {
			return err
		}
		if err := s.Store.SetKeyMaterial(ctx, k.Kid, material); err != nil {
			return err
		}
		if isPlain(k.PrivateKey) && sealed != nil {
			sealed(k.Kid)
		}
	}
	return nil
}
