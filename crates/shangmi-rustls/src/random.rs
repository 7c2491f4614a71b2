//! The generator rustls draws its public values from (hello randoms, session ids, ticket
//! nonces and age offsets), served from a per-thread buffer of the operating system's bytes.
//!
//! A handshake asks for half a dozen short values; each `getrandom` call costs a system call
//! (about 0.4 us, several percent of a server's full handshake), so one call fills a page and
//! later requests take from it. Secrets do not come from here: key shares, signature nonces and
//! the ticket cipher's nonces still ask the kernel directly.
//!
//! A process that forks must not hand the same bytes to parent and child. The page is mapped
//! with `MADV_WIPEONFORK` (Linux 4.14 on), so a child finds it zeroed, and a zero count means
//! "refill". Where the kernel refuses the advice, or off Linux, every request goes to the
//! kernel as before. Bytes handed out are wiped from the page.
//!
//! A virtual machine restored twice from one snapshot replays what was buffered, as it replays
//! the rest of its memory: public values only, and no more than one page of them.

use rustls::crypto::{GetRandomFailed, SecureRandom};

/// The operating system's generator, buffered per thread for the short values rustls asks.
#[derive(Debug)]
pub(crate) struct OsRandom;

impl SecureRandom for OsRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        #[cfg(target_os = "linux")]
        if let Some(done) = page::fill(buf) {
            return done;
        }
        getrandom::fill(buf).map_err(|_| GetRandomFailed)
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod page {
    use core::cell::RefCell;
    use core::ptr::NonNull;

    use rustls::crypto::GetRandomFailed;
    use zeroize::Zeroize;

    const PAGE: usize = 4096;
    /// The first word counts the bytes not yet handed out (zero in a fresh child: refill).
    const HEAD: usize = 8;
    const POOL: usize = PAGE - HEAD;
    /// Longer requests go to the kernel: buffering gains nothing on them.
    const LARGEST: usize = 256;

    /// One anonymous private page, wiped in a forked child.
    struct Page(NonNull<[u8; PAGE]>);

    impl Page {
        fn map() -> Option<Page> {
            // SAFETY: a fresh anonymous mapping; no existing memory is touched.
            let p = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    PAGE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return None;
            }
            let page = Page(NonNull::new(p.cast())?);
            // SAFETY: advice on the mapping just made, PAGE bytes, page-aligned by mmap.
            let advised = unsafe { libc::madvise(p, PAGE, libc::MADV_WIPEONFORK) };
            // Without the advice a child would repeat its parent's bytes: do not buffer (the
            // drop unmaps the page).
            (advised == 0).then_some(page)
        }

        fn bytes(&mut self) -> &mut [u8; PAGE] {
            // SAFETY: the mapping is PAGE readable and writable bytes, alive until the drop,
            // reachable only through this value (thread-local, never shared), and `&mut self`
            // makes the borrow exclusive.
            unsafe { self.0.as_mut() }
        }
    }

    impl Drop for Page {
        fn drop(&mut self) {
            self.bytes().zeroize();
            // SAFETY: unmaps the mapping `map` made; nothing refers to it after the drop.
            unsafe { libc::munmap(self.0.as_ptr().cast(), PAGE) };
        }
    }

    thread_local! {
        static BUFFER: RefCell<Option<Page>> = RefCell::new(Page::map());
    }

    /// Fills `buf` from this thread's page, refilling it from the kernel when it runs short;
    /// `None` when there is no page (or the request is long), for the caller to ask the kernel.
    pub(super) fn fill(buf: &mut [u8]) -> Option<Result<(), GetRandomFailed>> {
        if buf.len() > LARGEST {
            return None;
        }
        BUFFER
            .try_with(|cell| {
                let mut cell = cell.try_borrow_mut().ok()?;
                let bytes = cell.as_mut()?.bytes();
                let (head, pool) = bytes.split_at_mut(HEAD);
                let mut left = usize::from_le_bytes(head.try_into().ok()?).min(POOL);
                if left < buf.len() {
                    if getrandom::fill(pool).is_err() {
                        return Some(Err(GetRandomFailed));
                    }
                    left = POOL;
                }
                let taken = &mut pool[left - buf.len()..left];
                buf.copy_from_slice(taken);
                taken.zeroize();
                left -= buf.len();
                head.copy_from_slice(&left.to_le_bytes());
                Some(Ok(()))
            })
            .ok()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use rustls::crypto::SecureRandom;

    use super::OsRandom;

    #[test]
    fn values_differ_and_lengths_are_served() {
        let mut seen = std::collections::HashSet::new();
        // Past several refills of the page, and every length up to past the buffered limit.
        for n in 0..2000usize {
            let mut v = vec![0u8; 16 + n % 300];
            OsRandom.fill(&mut v).unwrap();
            assert!(v.iter().any(|&b| b != 0), "length {}", v.len());
            assert!(seen.insert(v), "a repeated value");
        }
        let mut empty = [0u8; 0];
        OsRandom.fill(&mut empty).unwrap();
    }

    #[test]
    fn threads_draw_different_bytes() {
        let draw = || {
            let mut v = [0u8; 32];
            OsRandom.fill(&mut v).unwrap();
            v
        };
        let here = draw();
        let there = std::thread::spawn(draw).join().unwrap();
        assert_ne!(here, there);
    }

    /// A child forked after the parent filled its page must not repeat the parent's next
    /// bytes.
    #[cfg(target_os = "linux")]
    #[test]
    #[allow(unsafe_code)]
    fn a_forked_child_does_not_repeat_its_parent() {
        let mut primed = [0u8; 32];
        OsRandom.fill(&mut primed).unwrap();
        let mut fds = [0i32; 2];
        // SAFETY: pipe writes two descriptors into the array it is given.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child only fills a buffer, writes it to the pipe and exits without
        // unwinding or running the harness's code.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let mut v = [0u8; 32];
            let ok = OsRandom.fill(&mut v).is_ok();
            // SAFETY: writes the 32 bytes of `v` to the pipe's write end, then exits at once.
            unsafe {
                if ok {
                    libc::write(fds[1], v.as_ptr().cast(), v.len());
                }
                libc::_exit(0);
            }
        }
        let mut parent = [0u8; 32];
        OsRandom.fill(&mut parent).unwrap();
        let mut child = [0u8; 32];
        // SAFETY: reads at most 32 bytes into `child`; waits for the child it forked.
        let got = unsafe {
            libc::close(fds[1]);
            let got = libc::read(fds[0], child.as_mut_ptr().cast(), child.len());
            libc::close(fds[0]);
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            got
        };
        assert_eq!(got, 32, "the child drew no bytes");
        assert_ne!(parent, child, "the child repeated the parent's bytes");
    }
}
