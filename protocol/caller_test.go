package protocol

import "testing"

func TestCallerGeneration(t *testing.T) {
	for _, tc := range []struct {
		payload any
		want    Generation
		ok      bool
	}{
		{map[string]any{CallerVersionMember: "0.2.0"}, Gen02, true},
		{map[string]any{CallerVersionMember: "0.3.1"}, Gen03, true},
		{map[string]any{CallerVersionMember: "0.4.2"}, Gen04, true},
		{map[string]any{CallerVersionMember: "9.9.0"}, 0, false},
		{map[string]any{CallerVersionMember: "x"}, 0, false},
		{map[string]any{CallerVersionMember: 4}, 0, false},
		{map[string]any{}, 0, false},
		{"not an object", 0, false},
		{nil, 0, false},
	} {
		g, ok := CallerGeneration(tc.payload)
		if g != tc.want || ok != tc.ok {
			t.Errorf("CallerGeneration(%v) = %v, %v; want %v, %v", tc.payload, g, ok, tc.want, tc.ok)
		}
	}
}
