package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
	"time"
)

// The partition is a line of the signed content, as the package comment
// writes it, and only when it is not 0: a request without one is signed
// exactly as before partitions.
func TestExecSignature_replay_partition_is_a_signed_line_only_when_named(t *testing.T) {
	exp := sigAt.Add(time.Minute)
	sum := sha256.Sum256(sigReq().Body)
	head := "toolgate-exec.v2\n" + strconv.FormatInt(sigAt.Unix(), 10) + "\n" + strconv.FormatInt(exp.Unix(), 10) + "\nresp-1-0\n9f86d081884c7d65\ndelete_customer_account\n\n"
	for _, tc := range []struct {
		p    int
		want string
	}{
		{0, head + hex.EncodeToString(sum[:])},
		{3, head + "3\n" + hex.EncodeToString(sum[:])},
	} {
		r := sigReq()
		r.ReplayPartition = tc.p
		got, err := ExecSignedContentV2(sigAt.Unix(), exp.Unix(), r)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("partition %d: signed %q, want %q", tc.p, got, tc.want)
		}
	}
}

// A request signed for partition 2 verifies only as partition 2: the header
// removed (partition 0), edited or added never verifies, in v2 and in v1.
func TestExecSignature_replay_partition_cannot_be_removed_or_changed(t *testing.T) {
	k := testKey(1)
	r := sigReq()
	r.ReplayPartition = 2
	h, err := SignExecUntil(r, sigAt, sigAt.Add(time.Minute), k)
	if err != nil {
		t.Fatal(err)
	}
	v1Only, err := SignExec(r, sigAt, k)
	if err != nil {
		t.Fatal(err)
	}
	w := ExecWindow{Now: sigAt.Add(time.Second)}
	if err := VerifyExecWindow(h, r, w, pub(k)); err != nil {
		t.Fatalf("as signed: %v", err)
	}
	if err := VerifyExecWindow(v1Only, r, w, pub(k)); err != nil {
		t.Fatalf("as signed, v1: %v", err)
	}
	for _, p := range []int{0, 1, 3, 63} {
		other := r
		other.ReplayPartition = p
		if err := VerifyExecWindow(h, other, w, pub(k)); !errors.Is(err, ErrExecInvalid) {
			t.Errorf("v2 as partition %d: %v, want ErrExecInvalid", p, err)
		}
		if err := VerifyExecWindow(v1Only, other, w, pub(k)); !errors.Is(err, ErrExecInvalid) {
			t.Errorf("v1 as partition %d: %v, want ErrExecInvalid", p, err)
		}
	}
	for _, p := range []int{-1, MaxPartitions} {
		bad := r
		bad.ReplayPartition = p
		if _, err := SignExecV2(bad, sigAt, sigAt.Add(time.Minute), k); err == nil {
			t.Errorf("partition %d was signed", p)
		}
	}
}

func TestParseReplayPartition_refuses_all_but_canonical_partitions(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want int
		ok   bool
	}{
		{nil, 0, true},
		{[]string{"1"}, 1, true},
		{[]string{"63"}, 63, true},
		{[]string{"0"}, 0, false}, // partition 0 is named by no header
		{[]string{"64"}, 0, false},
		{[]string{"-1"}, 0, false},
		{[]string{"01"}, 0, false},
		{[]string{"+1"}, 0, false},
		{[]string{" 1"}, 0, false},
		{[]string{"x"}, 0, false},
		{[]string{""}, 0, false},
		{[]string{"1", "1"}, 0, false},
		{[]string{"99999999999999999999"}, 0, false},
	} {
		got, err := ParseReplayPartition(tc.in)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if !tc.ok && !errors.Is(err, ErrExecMalformed) {
			t.Errorf("%q: %d, %v; want ErrExecMalformed", tc.in, got, err)
		}
	}
}

func TestExecReplayBucketPartition_names_each_partition_bucket(t *testing.T) {
	for p := range MaxPartitions {
		name := ExecReplayPartitionBucket(p)
		if got, ok := ExecReplayBucketPartition(name); !ok || got != p {
			t.Errorf("%s: %d, %v; want %d", name, got, ok, p)
		}
	}
	for _, name := range []string{"toolgate_exec_replay_0", "toolgate_exec_replay_64", "toolgate_exec_replay_01", "toolgate_exec_replay_x", "toolgate_exec_replayed", "toolgate_calls"} {
		if p, ok := ExecReplayBucketPartition(name); ok {
			t.Errorf("%s: partition %d, want none", name, p)
		}
	}
	if ExecReplayPartitionBucket(0) != ExecReplayBucket || ExecReplayPartitionBucket(2) != "toolgate_exec_replay_2" {
		t.Errorf("bucket names %s, %s", ExecReplayPartitionBucket(0), ExecReplayPartitionBucket(2))
	}
}
