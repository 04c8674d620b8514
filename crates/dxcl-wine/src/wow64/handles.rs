//! 32-bit handles for the host's 64-bit `cl_*` objects.
//!
//! The host's objects lie where a 32-bit program's pointers cannot reach, so the program gets a
//! 32-bit token for each: one token per host address, kept for good. No release is tracked: when
//! the host frees an object and later puts a new one at the same address, the new one gets the
//! same token, which is right, since the old one can no longer be named. The table grows with the
//! number of distinct addresses the host ever used, which its allocator keeps near the number of
//! objects alive at once.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// Tokens are `FIRST + STEP * index`: far from 0 (NULL stays NULL) and from the small integers a
/// kernel argument may hold, so that `clSetKernelArg`'s guess (wow64/mod.rs) seldom meets one.
const FIRST: u32 = 0x1000_0010;
const STEP: u32 = 16;

struct Table {
    tokens: BTreeMap<u64, u32>,
    hosts: Vec<u64>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    tokens: BTreeMap::new(),
    hosts: Vec::new(),
});

fn lock() -> MutexGuard<'static, Table> {
    // Plain data: a panic while it was held leaves it usable.
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The 32-bit token of host object `host` (0 for NULL), made on first sight.
pub fn narrow(host: u64) -> u32 {
    if host == 0 {
        return 0;
    }
    let mut t = lock();
    if let Some(token) = t.tokens.get(&host) {
        return *token;
    }
    let index = t.hosts.len() as u32;
    let Some(token) = index.checked_mul(STEP).and_then(|o| o.checked_add(FIRST)) else {
        // Out of tokens (hundreds of millions of addresses): the program gets NULL, as if the
        // host had run out of memory.
        return 0;
    };
    t.hosts.push(host);
    t.tokens.insert(host, token);
    token
}

/// The host object of a 32-bit token; `None` for a value no object was given.
pub fn lookup(token: u32) -> Option<u64> {
    let index = token.checked_sub(FIRST).filter(|o| o % STEP == 0)? / STEP;
    lock().hosts.get(index as usize).copied()
}

/// The host object of a 32-bit handle argument: NULL stays NULL, and a value that is no token
/// reaches the host as it is, as a 64-bit program's stray pointer would.
pub fn widen(token: u32) -> u64 {
    if token == 0 {
        return 0;
    }
    lookup(token).unwrap_or(token as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_one_per_address_and_map_back() {
        let (a, b) = (0x7f00_dead_0000u64, 0x7f00_beef_0000u64);
        let (ta, tb) = (narrow(a), narrow(b));
        assert_ne!(ta, tb);
        assert_eq!(narrow(a), ta, "the same address keeps its token");
        assert_eq!((widen(ta), widen(tb)), (a, b));
        assert_eq!((narrow(0), widen(0)), (0, 0));
        assert_eq!(lookup(ta + 4), None, "between tokens");
        assert_eq!(widen(0x1234), 0x1234, "no token: as it is");
    }
}
