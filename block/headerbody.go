package block

import (
	"fmt"
	"math"
)

// The header body's wire shapes. The first eight fields are common:
//
//	[block_number, slot, prev_hash / null, issuer_vkey, vrf_vkey,
//	 [vrf_output, vrf_proof], body_size, body_hash, …]
//
// The prototype's ends with `leios_certified: bool, [eb_hash, eb_size] /
// null` (ten fields, always). The CIP's ends with its flat optionals,
// `? (announced_eb: hash32, announced_eb_size: uint32), ? certified_eb:
// bool`: eight fields, nine (certified only), ten (announcement only) or
// eleven (both). The CIP's CDDL lets certified_eb be false; a false flag
// is written by omission here and refused when present, so one header has
// one encoding. The two are told apart by the ninth field's type: a
// boolean in the prototype's ten, a byte string in the CIP's ten.

// prototypeHeaderBody is the prototype's header body.
type prototypeHeaderBody struct {
	_              struct{} `cbor:",toarray"`
	BlockNumber    uint64
	Slot           uint64
	PrevHash       *Hash
	IssuerVKey     Bytes32
	VRFVKey        Bytes32
	VRF            VRFResult
	BodySize       uint64
	BodyHash       Hash
	LeiosCertified bool
	Announcement   *Announcement
}

// headerCommonFields is how many fields both shapes begin with.
const headerCommonFields = 8

// cborFalse and cborTrue are the simple values false and true.
const (
	cborFalse = 0xf4
	cborTrue  = 0xf5
)

func encodeHeaderBody(hb HeaderBody) []byte {
	if hb.Encoding != EncodingCIP {
		return mustMarshal(prototypeHeaderBody{
			BlockNumber: hb.BlockNumber, Slot: hb.Slot, PrevHash: hb.PrevHash, IssuerVKey: hb.IssuerVKey,
			VRFVKey: hb.VRFVKey, VRF: hb.VRF, BodySize: hb.BodySize, BodyHash: hb.BodyHash,
			LeiosCertified: hb.LeiosCertified, Announcement: hb.Announcement,
		})
	}
	fields := []any{hb.BlockNumber, hb.Slot, hb.PrevHash, hb.IssuerVKey, hb.VRFVKey, hb.VRF, hb.BodySize, hb.BodyHash}
	if a := hb.Announcement; a != nil {
		fields = append(fields, a.EbHash, a.EbSize)
	}
	if hb.LeiosCertified {
		fields = append(fields, true)
	}
	return mustMarshal(fields)
}

// decodeHeaderBody decodes either shape and records which it was.
func decodeHeaderBody(data []byte) (HeaderBody, error) {
	var items []RawCBOR
	if err := Unmarshal(data, &items); err != nil {
		return HeaderBody{}, err
	}
	if len(items) == 10 && len(items[8]) == 1 && (items[8][0] == cborFalse || items[8][0] == cborTrue) {
		var w prototypeHeaderBody
		if err := Unmarshal(data, &w); err != nil {
			return HeaderBody{}, err
		}
		return HeaderBody{
			BlockNumber: w.BlockNumber, Slot: w.Slot, PrevHash: w.PrevHash, IssuerVKey: w.IssuerVKey,
			VRFVKey: w.VRFVKey, VRF: w.VRF, BodySize: w.BodySize, BodyHash: w.BodyHash,
			LeiosCertified: w.LeiosCertified, Announcement: w.Announcement, Encoding: EncodingPrototype,
		}, nil
	}
	if len(items) < headerCommonFields || len(items) > headerCommonFields+3 {
		return HeaderBody{}, fmt.Errorf("%w: %d fields, want 8 to 11 (CIP) or 10 (prototype)", ErrMalformed, len(items))
	}
	hb := HeaderBody{Encoding: EncodingCIP}
	for i, field := range []any{&hb.BlockNumber, &hb.Slot, &hb.PrevHash, &hb.IssuerVKey, &hb.VRFVKey, &hb.VRF, &hb.BodySize, &hb.BodyHash} {
		if err := Unmarshal(items[i], field); err != nil {
			return HeaderBody{}, fmt.Errorf("field %d: %w", i, err)
		}
	}
	rest := items[headerCommonFields:]
	if len(rest) >= 2 {
		a := &Announcement{}
		if err := Unmarshal(rest[0], &a.EbHash); err != nil {
			return HeaderBody{}, fmt.Errorf("announced_eb: %w", err)
		}
		if err := Unmarshal(rest[1], &a.EbSize); err != nil || a.EbSize > math.MaxUint32 {
			return HeaderBody{}, fmt.Errorf("%w: announced_eb_size is not a uint32", ErrMalformed)
		}
		hb.Announcement, rest = a, rest[2:]
	}
	if len(rest) == 1 {
		// The one encoding of a certified header: false is omitted.
		if len(rest[0]) != 1 || rest[0][0] != cborTrue {
			return HeaderBody{}, fmt.Errorf("%w: certified_eb is present but not true (an uncertified header omits it)", ErrMalformed)
		}
		hb.LeiosCertified = true
	}
	return hb, nil
}
