package ledger

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"golang.org/x/crypto/blake2b"
)

// Shelley address header types (high nibble of the first byte) this ledger
// knows by name. Only addrBase and addrEnterprise are accepted: both have a
// payment key hash, which is all the witness rule needs.
const (
	addrBase       = 0x0 // payment key hash ‖ stake key hash
	addrEnterprise = 0x6 // payment key hash

	baseAddressSize       = 1 + 28 + 28
	enterpriseAddressSize = 1 + 28
)

// KeyHash is the Blake2b-224 hash of an ed25519 verification key: the
// payment credential of an address.
func KeyHash(vkey []byte) [28]byte {
	h, _ := blake2b.New(28, nil) // only fails for a size > 64 or a long key
	h.Write(vkey)
	var kh [28]byte
	h.Sum(kh[:0])
	return kh
}

// EnterpriseAddress is the Shelley enterprise address (type 6) of a payment
// key hash. Only the low 4 bits of network are used.
func EnterpriseAddress(network byte, keyHash [28]byte) []byte {
	a := make([]byte, enterpriseAddressSize)
	a[0] = addrEnterprise<<4 | network&0x0f
	copy(a[1:], keyHash[:])
	return a
}

// BaseAddress is the Shelley base address (type 0) of a payment key hash and
// a stake key hash. Only the low 4 bits of network are used.
func BaseAddress(network byte, payment, stake [28]byte) []byte {
	a := make([]byte, baseAddressSize)
	a[0] = addrBase<<4 | network&0x0f
	copy(a[1:], payment[:])
	copy(a[29:], stake[:])
	return a
}

// CheckAddress accepts exactly the address kinds this ledger supports: a
// Shelley base address with key payment and stake credentials, or an
// enterprise address with a key payment credential. Other kinds wrap
// ErrUnsupported and name the kind; a wrong length wraps ErrMalformed.
func CheckAddress(addr []byte) error {
	if rule, detail := checkAddress(addr); rule != nil {
		return fmt.Errorf("%w: %s", rule, detail)
	}
	return nil
}

// checkAddress is CheckAddress's verdict: the rule addr breaks and how, or
// nil.
func checkAddress(addr []byte) (rule error, detail string) {
	if len(addr) == 0 {
		return ErrMalformed, "empty address"
	}
	want := 0
	switch kind := addr[0] >> 4; kind {
	case addrBase:
		want = baseAddressSize
	case addrEnterprise:
		want = enterpriseAddressSize
	case 0x1, 0x3, 0x5, 0x7:
		return ErrUnsupported, fmt.Sprintf("script payment credential (address type %d)", kind)
	case 0x2:
		return ErrUnsupported, "script stake credential (address type 2)"
	case 0x4:
		return ErrUnsupported, "pointer address (address type 4)"
	case 0x8:
		return ErrUnsupported, "Byron bootstrap address"
	case 0xe, 0xf:
		return ErrUnsupported, "reward (stake) address as output"
	default:
		return ErrMalformed, fmt.Sprintf("unknown address type %d", kind)
	}
	if len(addr) != want {
		return ErrMalformed, fmt.Sprintf("address type %d of %d bytes, want %d", addr[0]>>4, len(addr), want)
	}
	return nil, ""
}

// AddressError is why ParseAddress refused a text. It wraps ErrMalformed
// or ErrUnsupported, but says "address", not "transaction": the text was
// never part of one.
type AddressError struct {
	Text   string
	Rule   error // ErrMalformed or ErrUnsupported
	Detail string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("not an address this node reads: %q: %s", e.Text, e.Detail)
}

func (e *AddressError) Unwrap() error { return e.Rule }

// AddressNetwork is the network id of a Shelley address (the header's low
// nibble). Meaningful only for an address CheckAddress accepts.
func AddressNetwork(addr []byte) byte { return addr[0] & 0x0f }

// PaymentKeyHash is the payment key hash of a base or enterprise address.
func PaymentKeyHash(addr []byte) ([28]byte, error) {
	var kh [28]byte
	if err := CheckAddress(addr); err != nil {
		return kh, err
	}
	copy(kh[:], addr[1:29])
	return kh, nil
}

// The bech32 prefixes (human-readable parts) of Shelley addresses (CIP-5,
// CIP-19): mainnet's for network id 1, the testnets' for every other id.
const (
	MainnetAddressPrefix = "addr"
	TestnetAddressPrefix = "addr_test"
	MainnetNetworkID     = 1
)

// AddressPrefix is the bech32 prefix of the addresses of a network id.
func AddressPrefix(network byte) string {
	if network == MainnetNetworkID {
		return MainnetAddressPrefix
	}
	return TestnetAddressPrefix
}

// FormatAddress is a Shelley address as cardano-cli writes it: bech32 (not
// bech32m) under the prefix of its network, the header's low nibble. A
// base address is 103 characters or more: Cardano lifts bech32's limit of
// 90. An empty address is "".
func FormatAddress(addr []byte) string {
	if len(addr) == 0 {
		return ""
	}
	s, err := bech32.EncodeFromBase256(AddressPrefix(AddressNetwork(addr)), addr)
	if err != nil {
		// Only bytes of more than 5 bits or a prefix of invalid characters
		// fail, and neither can happen here.
		panic(fmt.Sprintf("ledger: bech32 of address %x: %v", addr, err))
	}
	return s
}

// ParseAddress reads an address as a person or a file gives it: bech32
// (addr1…, addr_test1…, in one case, of any length) or hex, surrounding
// space ignored. A bech32 address must carry the prefix of its network.
// The address must be one CheckAddress accepts; errors wrap ErrMalformed
// or ErrUnsupported.
func ParseAddress(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	bad := func(rule error, format string, args ...any) error {
		return &AddressError{Text: s, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	}
	var addr []byte
	if strings.HasPrefix(strings.ToLower(s), MainnetAddressPrefix) {
		prefix, data, version, err := bech32.DecodeNoLimitWithVersion(s)
		if err != nil {
			return nil, bad(ErrMalformed, "bech32: %v", err)
		}
		if version != bech32.Version0 {
			return nil, bad(ErrMalformed, "a bech32m checksum, Cardano addresses use bech32")
		}
		if prefix != MainnetAddressPrefix && prefix != TestnetAddressPrefix {
			return nil, bad(ErrMalformed, "bech32 prefix %q is not an address's (%s, %s)", prefix, MainnetAddressPrefix, TestnetAddressPrefix)
		}
		if addr, err = bech32.ConvertBits(data, 5, 8, false); err != nil {
			return nil, bad(ErrMalformed, "bech32: %v", err)
		}
		if len(addr) > 0 && prefix != AddressPrefix(AddressNetwork(addr)) {
			return nil, bad(ErrMalformed, "prefix %q on network %d, want %q", prefix, AddressNetwork(addr), AddressPrefix(AddressNetwork(addr)))
		}
	} else {
		var err error
		if addr, err = hex.DecodeString(s); err != nil {
			return nil, bad(ErrMalformed, "neither bech32 (addr1…, addr_test1…) nor hex")
		}
	}
	if rule, detail := checkAddress(addr); rule != nil {
		return nil, bad(rule, "%s", detail)
	}
	return addr, nil
}
