//! A real-time thread's CPU kept out of idle states while the thread runs: the CPU's PM QoS
//! resume latency (`/sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us`) set to
//! `n/a`, no latency tolerated, so its idle loop polls instead of halting.
//!
//! Why: a thread that sleeps 10 ms between cycles wakes on a CPU that halted meanwhile, and
//! on a VM a halted vCPU gives its core to the host, which empties its caches and TLB. The
//! cycle then pays a miss for every line and page it touches: on the 2-vCPU VM of
//! `naobench cycle`, the DCM's compute at 10 ms is several times its compute at 1 ms. The
//! price is the CPU's idle power. This is what `cyclictest` does by default, for all CPUs
//! (`/dev/cpu_dma_latency`); here only the thread's own CPU is held.
//!
//! The value is a file the whole system shares, so it is held per CPU for the whole
//! process (two threads on one CPU restore it once, when the last ends), and a process
//! killed without unwinding leaves the CPU polling: `echo 0 > .../pm_qos_resume_latency_us`
//! lets it idle again.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Where Linux lists the CPUs.
const CPUS: &str = "/sys/devices/system/cpu";

/// The resume latency that tolerates none: the CPU's idle loop polls.
const NO_LATENCY: &str = "n/a";

/// A CPU held awake by this process.
struct Held {
    file: PathBuf,
    holders: usize,
    /// The file's value before the first holder, written back after the last.
    previous: String,
}

static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

/// While alive, a CPU does not idle (see the module's documentation).
#[derive(Debug)]
pub(crate) struct CpuAwake {
    file: PathBuf,
}

impl CpuAwake {
    /// Hold `cpu` awake; refused without the right to write its sysfs file (root).
    pub(crate) fn hold(cpu: usize) -> io::Result<CpuAwake> {
        CpuAwake::hold_file(Path::new(CPUS).join(format!("cpu{cpu}/power/pm_qos_resume_latency_us")))
    }

    fn hold_file(file: PathBuf) -> io::Result<CpuAwake> {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = held.iter_mut().find(|entry| entry.file == file) {
            entry.holders += 1;
            return Ok(CpuAwake { file });
        }
        let previous = fs::read_to_string(&file)?.trim().to_owned();
        fs::write(&file, NO_LATENCY)?;
        held.push(Held { file: file.clone(), holders: 1, previous });
        Ok(CpuAwake { file })
    }
}

impl Drop for CpuAwake {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(position) = held.iter().position(|entry| entry.file == self.file) else { return };
        held[position].holders -= 1;
        if held[position].holders == 0 {
            let entry = held.swap_remove(position);
            if let Err(error) = fs::write(&entry.file, &entry.previous) {
                tracing::warn!(
                    file = %entry.file.display(),
                    %error,
                    "cannot let the CPU idle again: write {} to the file",
                    entry.previous
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for one CPU's sysfs file, in a directory of the test's own.
    fn cpu_file(test: &str, value: &str) -> PathBuf {
        let directory =
            std::env::temp_dir().join(format!("naobroker-rt-awake-{}-{test}", std::process::id()));
        fs::create_dir_all(&directory).unwrap();
        let file = directory.join("pm_qos_resume_latency_us");
        fs::write(&file, value).unwrap();
        file
    }

    fn read(file: &Path) -> String {
        fs::read_to_string(file).unwrap()
    }

    #[test]
    fn a_held_cpu_polls_and_gets_its_value_back_when_released() {
        let file = cpu_file("one", "100\n");
        let awake = CpuAwake::hold_file(file.clone()).unwrap();
        assert_eq!(read(&file), "n/a");
        drop(awake);
        assert_eq!(read(&file), "100");
    }

    #[test]
    fn two_holders_of_one_cpu_restore_it_once_after_the_last() {
        let file = cpu_file("two", "0");
        let first = CpuAwake::hold_file(file.clone()).unwrap();
        let second = CpuAwake::hold_file(file.clone()).unwrap();
        drop(first);
        assert_eq!(read(&file), "n/a", "the second thread still runs on the CPU");
        drop(second);
        assert_eq!(read(&file), "0", "not the n/a the second holder would have read");
    }

    #[test]
    fn a_cpu_without_the_file_is_refused_and_holds_nothing() {
        let file = std::env::temp_dir().join("naobroker-rt-awake-no-such-cpu/pm_qos_resume_latency_us");
        assert!(CpuAwake::hold_file(file.clone()).is_err());
        assert!(HELD.lock().unwrap().iter().all(|entry| entry.file != file));
    }
}
