package ledger

import (
	"encoding/hex"
	"errors"
	"testing"
)

func TestKeyHashGolden(t *testing.T) {
	// Python: hashlib.blake2b(bytes([0x33]*32), digest_size=28)
	got := KeyHash(unhex(t, hexVK))
	if h := hex.EncodeToString(got[:]); h != "e47bb1c6309ebd06695ae459e69fcf3d585e5f41e3d3d8ce7152b524" {
		t.Fatalf("KeyHash = %s", h)
	}
}

func TestCheckAddress(t *testing.T) {
	kh := [28]byte(unhex(t, hexA22))
	tests := []struct {
		name    string
		addr    []byte
		want    error
		network byte
	}{
		{"enterprise", EnterpriseAddress(0, kh), nil, 0},
		{"enterprise network 1", EnterpriseAddress(1, kh), nil, 1},
		{"base", BaseAddress(3, kh, [28]byte{1}), nil, 3},
		{"script base", unhex(t, "10", hexA22, hexS66), ErrUnsupported, 0},
		{"key/script base", unhex(t, "20", hexA22, hexS66), ErrUnsupported, 0},
		{"pointer", unhex(t, "40", hexA22, "010203"), ErrUnsupported, 0},
		{"script enterprise", unhex(t, "70", hexA22), ErrUnsupported, 0},
		{"byron", unhex(t, "82d818"), ErrUnsupported, 0},
		{"reward", unhex(t, "e0", hexA22), ErrUnsupported, 0},
		{"reserved type", unhex(t, "90", hexA22), ErrMalformed, 0},
		{"empty", nil, ErrMalformed, 0},
		{"enterprise too long", unhex(t, "60", hexA22, "00"), ErrMalformed, 0},
		{"base too short", unhex(t, "00", hexA22), ErrMalformed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckAddress(tt.addr)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			got, perr := PaymentKeyHash(tt.addr)
			if (perr == nil) != (err == nil) {
				t.Fatalf("PaymentKeyHash err = %v", perr)
			}
			if err == nil && (got != kh || AddressNetwork(tt.addr) != tt.network) {
				t.Fatalf("key hash %x, network %d", got, AddressNetwork(tt.addr))
			}
		})
	}
}

func TestAddressConstructors(t *testing.T) {
	kh := [28]byte(unhex(t, hexA22))
	if got := hex.EncodeToString(EnterpriseAddress(0x1f, kh)); got != "6f"+hexA22 {
		t.Fatalf("enterprise %s (network must be masked to 4 bits)", got)
	}
	if got := hex.EncodeToString(BaseAddress(0, kh, [28]byte(unhex(t, hexS66)))); got != "00"+hexA22+hexS66 {
		t.Fatalf("base %s", got)
	}
}
