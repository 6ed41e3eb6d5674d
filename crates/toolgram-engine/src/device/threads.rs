//! How many CPU threads the engine uses when none is given: llama.cpp's own rule (its
//! `common_cpu_get_num_physical_cores`): one thread per physical core — the distinct
//! `topology/thread_siblings` sets under `/sys/devices/system/cpu`, so hyperthreads that share
//! a core's math units count once — else, where the topology cannot be read, the logical CPUs
//! halved above 4. Capped by the CPUs this process may run on (affinity, cgroup quota), which
//! llama.cpp does not do: a container given 2 CPUs of a 16-core host gets 2 threads, not 8.
//!
//! It must not spawn or pin threads; on a GPU these threads only feed the device.

use std::collections::HashSet;
use std::path::Path;

/// The default thread count (see the module doc), at least 1.
pub fn default_threads() -> u32 {
    let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cores = physical_cores(Path::new("/sys/devices/system/cpu")).unwrap_or(if allowed > 4 {
        allowed / 2
    } else {
        allowed
    });
    cores.min(allowed).max(1) as u32
}

/// The number of distinct `cpuN/topology/thread_siblings` sets under `root` (`cpu0`, `cpu1`, …
/// while they exist), or `None` when there are none to read.
fn physical_cores(root: &Path) -> Option<usize> {
    let mut siblings = HashSet::new();
    for cpu in 0.. {
        let file = root.join(format!("cpu{cpu}/topology/thread_siblings"));
        let Ok(text) = std::fs::read_to_string(file) else {
            break;
        };
        siblings.insert(text.trim().to_owned());
    }
    (!siblings.is_empty()).then_some(siblings.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sysfs-like tree: CPU `i` belongs to core `cores[i]` (a sibling mask per core).
    fn topology(name: &str, cores: &[u32]) -> std::path::PathBuf {
        let root =
            std::env::temp_dir().join(format!("toolgram-threads-{name}-{}", std::process::id()));
        for (cpu, core) in cores.iter().enumerate() {
            let dir = root.join(format!("cpu{cpu}/topology"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("thread_siblings"),
                format!("{:x}\n", 0b11u64 << (2 * core)),
            )
            .unwrap();
        }
        root
    }

    #[test]
    fn hyperthreads_of_one_core_count_once() {
        let root = topology("smt", &[0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(physical_cores(&root), Some(4));
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn cores_without_siblings_count_each() {
        let root = topology("plain", &[0, 1, 2]);
        assert_eq!(physical_cores(&root), Some(3));
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn no_topology_is_none_and_the_default_stays_within_the_allowed_cpus() {
        assert_eq!(physical_cores(Path::new("/nonexistent/cpu")), None);
        let allowed = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        assert!((1..=allowed).contains(&default_threads()));
    }
}
