package ledger

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bech32"
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

// The CIP-19 test vectors: the addresses of its payment key (addr_vk1w0l2…)
// and stake key, as every Cardano library writes them.
const (
	cip19PaymentVKey = "addr_vk1w0l2sr2zgfm26ztc6nl9xy8ghsk5sh6ldwemlpmp9xylzy4dtf7st80zhd"
	cip19PaymentHash = "9493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e"
	cip19StakeHash   = "337b62cfff6403a06a3acbc34f8c46003c69fe79a3628cefa9c47251"
)

func TestAddressBech32Golden(t *testing.T) {
	// The payment key hash CIP-19 builds its addresses from is that of
	// its addr_vk: the whole chain from a verification key to bech32.
	_, data, err := bech32.DecodeNoLimit(cip19PaymentVKey)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := bech32.ConvertBits(data, 5, 8, false)
	if err != nil {
		t.Fatal(err)
	}
	payment := KeyHash(vkey)
	if got := hex.EncodeToString(payment[:]); got != cip19PaymentHash {
		t.Fatalf("KeyHash(addr_vk) = %s, want %s", got, cip19PaymentHash)
	}
	stake := [28]byte(unhex(t, cip19StakeHash))
	tests := []struct {
		name string
		addr []byte
		want string
	}{
		{"type-00 base, mainnet", BaseAddress(1, payment, stake), "addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgse35a3x"},
		{"type-00 base, testnet", BaseAddress(0, payment, stake), "addr_test1qz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgs68faae"},
		{"type-06 enterprise, mainnet", EnterpriseAddress(1, payment), "addr1vx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzers66hrl8"},
		{"type-06 enterprise, testnet", EnterpriseAddress(0, payment), "addr_test1vz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerspjrlsz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatAddress(tt.addr); got != tt.want {
				t.Fatalf("FormatAddress = %s, want %s", got, tt.want)
			}
			for _, text := range []string{tt.want, strings.ToUpper(tt.want), " " + tt.want + "\n", hex.EncodeToString(tt.addr)} {
				got, err := ParseAddress(text)
				if err != nil || !bytes.Equal(got, tt.addr) {
					t.Fatalf("ParseAddress(%q) = %x, %v; want %x", text, got, err, tt.addr)
				}
			}
		})
	}
}

func TestAddressPrefix(t *testing.T) {
	for network, want := range map[byte]string{0: "addr_test", 1: "addr", 2: "addr_test", 15: "addr_test"} {
		if got := AddressPrefix(network); got != want {
			t.Errorf("AddressPrefix(%d) = %s, want %s", network, got, want)
		}
	}
	if FormatAddress(nil) != "" {
		t.Error("FormatAddress(nil) is not empty")
	}
}

func TestParseAddressRefuses(t *testing.T) {
	payment := [28]byte(unhex(t, cip19PaymentHash))
	mainnet := FormatAddress(EnterpriseAddress(1, payment))
	// The right payload under the other network's prefix, with a valid
	// checksum: only the prefix is wrong.
	wrongPrefix, err := bech32.EncodeFromBase256("addr_test", EnterpriseAddress(1, payment))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := bech32.ConvertBits(EnterpriseAddress(0, payment), 8, 5, true)
	bech32m, _ := bech32.EncodeM("addr_test", data)
	script, _ := bech32.EncodeFromBase256("addr", unhex(t, "71", hexA22))
	tests := []struct {
		name, text string
		want       error
		says       string
	}{
		{"empty", "", ErrMalformed, "empty address"},
		{"a typo", mainnet[:20] + "q" + mainnet[21:], ErrMalformed, "checksum"},
		{"mixed case", "Addr" + mainnet[4:], ErrMalformed, "not all lowercase or all uppercase"},
		{"prefix of another network", wrongPrefix, ErrMalformed, `prefix "addr_test" on network 1, want "addr"`},
		{"bech32m", bech32m, ErrMalformed, "bech32m"},
		{"stake address", "stake1uyehkck0lajq8gr28t9uxnuvgcqrc6070x3k9r8048z8y5gh6ffgw", ErrMalformed, "neither bech32"},
		{"verification key", cip19PaymentVKey, ErrMalformed, `bech32 prefix "addr_vk" is not an address's`},
		{"odd hex", "60abc", ErrMalformed, "neither bech32"},
		{"script address", script, ErrUnsupported, "script payment credential"},
		{"hex too short", "60" + hexA22[:10], ErrMalformed, "of 6 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAddress(tt.text)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("ParseAddress(%q) = %v, want %v saying %q", tt.text, err, tt.want, tt.says)
			}
		})
	}
}
