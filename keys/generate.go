package keys

import (
	"crypto/ed25519"

	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/vrf"
)

// GenerateKeyFiles draws an ed25519 key of the role (from crypto/rand) and
// writes its signing key file and, unless vkeyPath is "", its verification
// key file. It returns the verification key.
func GenerateKeyFiles(role Role, skeyPath, vkeyPath string) (ed25519.PublicKey, error) {
	key, err := GenerateSigningKey(nil)
	if err != nil {
		return nil, err
	}
	if err := WriteSigningKey(skeyPath, role, key); err != nil {
		return nil, err
	}
	vkey := key.Public().(ed25519.PublicKey)
	if vkeyPath != "" {
		if err := WriteVerificationKey(vkeyPath, role, vkey); err != nil {
			return nil, err
		}
	}
	return vkey, nil
}

// GenerateVRFKeyFiles draws a VRF key (from crypto/rand) and writes its
// signing and verification key files. It returns the verification key.
func GenerateVRFKeyFiles(skeyPath, vkeyPath string) (vrf.PublicKey, error) {
	key, err := GenerateVRFKey(nil)
	if err != nil {
		return vrf.PublicKey{}, err
	}
	if err := WriteVRFSigningKey(skeyPath, key); err != nil {
		return vrf.PublicKey{}, err
	}
	if err := WriteVRFVerificationKey(vkeyPath, key.Public()); err != nil {
		return vrf.PublicKey{}, err
	}
	return key.Public(), nil
}

// GeneratePaymentKeyFiles draws a payment key, writes it as PREFIX.skey and
// PREFIX.vkey and its enterprise address in bech32, as cardano-cli does,
// as PREFIX.addr, and returns the address.
func GeneratePaymentKeyFiles(prefix string, networkID byte) ([]byte, error) {
	vkey, err := GenerateKeyFiles(Payment, prefix+".skey", prefix+".vkey")
	if err != nil {
		return nil, err
	}
	addr, err := EnterpriseAddress(vkey, networkID)
	if err != nil {
		return nil, err
	}
	if err := WriteAddressFile(prefix+".addr", addr); err != nil {
		return nil, err
	}
	return addr, nil
}

// GenerateBLSKeyFiles draws a BLS voting key (from crypto/rand) and writes
// its signing and verification key files. It returns the verification key
// and its proof of possession, which a genesis registers together.
func GenerateBLSKeyFiles(skeyPath, vkeyPath string) (*bls.PublicKey, *bls.PossessionProof, error) {
	key, err := GenerateBLSKey(nil)
	if err != nil {
		return nil, nil, err
	}
	if err := WriteBLSSigningKey(skeyPath, key); err != nil {
		return nil, nil, err
	}
	if err := WriteBLSVerificationKey(vkeyPath, key.PublicKey()); err != nil {
		return nil, nil, err
	}
	return key.PublicKey(), key.ProvePossession(), nil
}
