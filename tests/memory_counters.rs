//! The heap counters' bookkeeping (`tls_bench_harness::memory`), fed by hand: this
//! test binary has no allocator interposer, so only these calls reach them.
//! Alone in its binary because the scope is process-wide.

use tls_bench_harness::memory::{Scope, Snapshot, in_scope, record_alloc, record_free, scope};

#[test]
fn scopes_nest_and_charge_the_right_counters() {
    assert_eq!(scope(), Scope::Harness);
    let before = Snapshot::take();
    in_scope(Scope::Client, || {
        record_alloc(100, 104);
        in_scope(Scope::Harness, || record_alloc(10, 24));
        assert_eq!(scope(), Scope::Client);
    });
    in_scope(Scope::Server, || record_free(104));
    let after = Snapshot::take();
    let client = after.since(&before, Scope::Client);
    assert_eq!((client.allocs, client.requested, client.usable), (1, 100, 104));
    assert_eq!(after.since(&before, Scope::Harness).requested, 10);
    assert_eq!(after.since(&before, Scope::Server).net_bytes(), -104);
    assert_eq!(after.since_all(&before).net_blocks(), 1);
    assert_eq!(scope(), Scope::Harness);
}
