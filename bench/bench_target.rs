// bench_target.rs — the sampling benchmark's target (see bench/README.md).
//
//     bench_target PROGRESS_FILE SECONDS
//
// Threads: main, one busy worker ("busy") doing HashMap insert/get with an
// inlined hash helper, and four idle threads ("idle-0".."idle-3") blocked on
// a channel receive. Every 50 ms main replaces PROGRESS_FILE (write to
// PROGRESS_FILE.tmp, then rename, so a reader never sees a torn line) with
//     OPS NANOS
// where OPS is the worker's operation count so far and NANOS the time since
// start by the target's own monotonic clock. Throughput over a window is
// ΔOPS / ΔNANOS between two reads, which does not depend on when the reader
// happened to look. Exits after SECONDS.
//
// Built with `--cfg bloat` (and -C debuginfo=2 -C opt-level=0) it also
// instantiates a generic exerciser of BTreeMap/HashMap/Vec for every pair of
// 5 key types × 5 value types (25 monomorphized copies of a good part of
// std's collections, ~0.65 MB each at opt-level=0 with full debuginfo) and
// runs each once at startup: that gives a ~20 MB
// binary with lots of DWARF for the attach-time measurement, while the
// steady-state behaviour stays the same.
//
// Must compile with rustc 1.63 (edition 2018): no let-else, no black_box.

use std::collections::HashMap;
use std::env;
use std::fs;
use std::process;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

// The hot helper: inlined into the worker loop, so a profiler with inline
// frames shows it under `busy_worker`.
#[inline(always)]
fn mix_hash(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[inline(never)]
fn busy_worker(ops: Arc<AtomicU64>, stop: Arc<AtomicBool>) -> u64 {
    let mut map: HashMap<u64, u64> = HashMap::with_capacity(1 << 16);
    let mut sum: u64 = 0;
    let mut i: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..1024 {
            let key = mix_hash(i) & 0xffff;
            map.insert(key, i);
            if let Some(v) = map.get(&(mix_hash(i ^ 0x5555) & 0xffff)) {
                sum = sum.wrapping_add(*v);
            }
            i += 1;
        }
        ops.fetch_add(1024, Ordering::Relaxed);
    }
    sum
}

fn write_progress(path: &str, tmp: &str, ops: u64, nanos: u128) {
    let line = format!("{} {}\n", ops, nanos);
    // A failed write only loses one progress point; the next one replaces it.
    if fs::write(tmp, line).is_ok() {
        let _ = fs::rename(tmp, path);
    }
}

#[cfg(bloat)]
mod bloat {
    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Debug;
    use std::hash::Hash;

    pub trait Make: Copy + Ord + Hash + Debug + Default {
        fn make(x: u64) -> Self;
    }

    macro_rules! newtypes {
        ($($t:ident)*) => {
            $(
                #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
                pub struct $t(u64, u32);
                impl Make for $t {
                    fn make(x: u64) -> Self { $t(x, x as u32) }
                }
            )*
        };
    }
    newtypes!(K0 K1 K2 K3 K4);
    newtypes!(V0 V1 V2 V3 V4);

    #[inline(never)]
    fn exercise<K: Make, V: Make>(seed: u64) -> u64 {
        let mut tree: BTreeMap<K, V> = BTreeMap::new();
        let mut hash: HashMap<K, V> = HashMap::new();
        let mut list: Vec<(K, V)> = Vec::new();
        for i in 0..64u64 {
            let k = K::make(super::mix_hash(seed ^ i) & 0xff);
            let v = V::make(i);
            tree.insert(k, v);
            hash.insert(k, v);
            list.push((k, v));
        }
        list.sort();
        list.dedup_by_key(|p| p.0);
        let mut n = tree.len() as u64 + hash.len() as u64 + list.len() as u64;
        for (k, _) in list.iter() {
            if tree.remove(k).is_some() {
                n += 1;
            }
            if hash.get(k).is_some() {
                n += 1;
            }
        }
        n + format!("{:?}", tree.iter().next()).len() as u64
    }

    macro_rules! row {
        ($sum:ident, $k:ident; ($($v:ident)*)) => {
            $( $sum = $sum.wrapping_add(exercise::<$k, $v>($sum)); )*
        };
    }
    macro_rules! grid {
        ($sum:ident; ($($k:ident)*); $vs:tt) => {
            $( row!($sum, $k; $vs); )*
        };
    }

    pub fn run_all() -> u64 {
        let mut sum: u64 = 1;
        grid!(sum; (K0 K1 K2 K3 K4); (V0 V1 V2 V3 V4));
        sum
    }
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: {} PROGRESS_FILE SECONDS", args[0]);
        process::exit(2);
    }
    let path = args[1].clone();
    let tmp = format!("{}.tmp", path);
    let seconds: f64 = match args[2].parse() {
        Ok(s) if s > 0.0 => s,
        _ => {
            eprintln!("SECONDS must be a positive number, not {:?}", args[2]);
            process::exit(2);
        }
    };

    #[cfg(bloat)]
    {
        let s = bloat::run_all();
        if s == 42 {
            println!("unlikely");
        }
    }

    let start = Instant::now();
    let ops = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));

    let mut idle_senders = Vec::new();
    let mut idle_handles = Vec::new();
    for n in 0..4 {
        let (tx, rx) = mpsc::channel::<u64>();
        idle_senders.push(tx);
        let handle = thread::Builder::new()
            .name(format!("idle-{}", n))
            .spawn(move || {
                let mut got = 0u64;
                // Blocks until main drops the sender at the end.
                while let Ok(v) = rx.recv() {
                    got = got.wrapping_add(v);
                }
                got
            })
            .expect("spawn idle thread");
        idle_handles.push(handle);
    }

    let worker = {
        let ops = ops.clone();
        let stop = stop.clone();
        thread::Builder::new()
            .name("busy".to_string())
            .spawn(move || busy_worker(ops, stop))
            .expect("spawn worker")
    };

    let run_for = Duration::from_secs_f64(seconds);
    loop {
        thread::sleep(Duration::from_millis(50));
        let elapsed = start.elapsed();
        write_progress(&path, &tmp, ops.load(Ordering::Relaxed), elapsed.as_nanos());
        if elapsed >= run_for {
            break;
        }
    }

    stop.store(true, Ordering::Relaxed);
    let sum = worker.join().unwrap_or(0);
    drop(idle_senders);
    for h in idle_handles {
        let _ = h.join();
    }
    if sum == 1 {
        println!("checksum {}", sum);
    }
}
