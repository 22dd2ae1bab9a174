package ledger

import (
	"fmt"

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
	if len(addr) == 0 {
		return fmt.Errorf("%w: empty address", ErrMalformed)
	}
	want := 0
	switch kind := addr[0] >> 4; kind {
	case addrBase:
		want = baseAddressSize
	case addrEnterprise:
		want = enterpriseAddressSize
	case 0x1, 0x3, 0x5, 0x7:
		return fmt.Errorf("%w: script payment credential (address type %d)", ErrUnsupported, kind)
	case 0x2:
		return fmt.Errorf("%w: script stake credential (address type 2)", ErrUnsupported)
	case 0x4:
		return fmt.Errorf("%w: pointer address (address type 4)", ErrUnsupported)
	case 0x8:
		return fmt.Errorf("%w: Byron bootstrap address", ErrUnsupported)
	case 0xe, 0xf:
		return fmt.Errorf("%w: reward (stake) address as output", ErrUnsupported)
	default:
		return fmt.Errorf("%w: unknown address type %d", ErrMalformed, kind)
	}
	if len(addr) != want {
		return fmt.Errorf("%w: address type %d of %d bytes, want %d", ErrMalformed, addr[0]>>4, len(addr), want)
	}
	return nil
}

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
