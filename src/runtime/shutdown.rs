//! One shutdown signal that every loop holds: Ctrl-C or SIGTERM (or a test) requests it once, and
//! everyone waiting sees it, however many times they ask.

use std::time::{Duration, Instant};

use tokio::sync::watch;

/// A cloneable handle on "stop now". Cheap to poll, cheap to await.
#[derive(Clone, Debug)]
pub struct Shutdown {
    /// When the stop was first requested (None: not yet).
    rx: watch::Receiver<Option<Instant>>,
    tx: std::sync::Arc<watch::Sender<Option<Instant>>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

impl Shutdown {
    /// A signal nobody has requested yet; request it with [`Shutdown::request`].
    pub fn new() -> Self {
        let (tx, rx) = watch::channel(None);
        Shutdown {
            rx,
            tx: std::sync::Arc::new(tx),
        }
    }

    /// A signal requested by Ctrl-C (SIGINT) or SIGTERM. Needs a running tokio runtime.
    pub fn on_signals() -> Self {
        let shutdown = Shutdown::new();
        let requester = shutdown.clone();
        tokio::spawn(async move {
            os_signal().await;
            requester.request();
        });
        shutdown
    }

    /// Ask everyone to stop.
    pub fn request(&self) {
        self.tx.send_if_modified(|at| {
            let first = at.is_none();
            if first {
                *at = Some(Instant::now());
            }
            first
        });
    }

    pub fn is_requested(&self) -> bool {
        self.rx.borrow().is_some()
    }

    /// Resolves once a stop is requested (at once if it already was).
    pub async fn wait(&self) {
        let mut rx = self.rx.clone();
        // An error means every sender is gone, which cannot happen while we hold one.
        let _ = rx.wait_for(Option::is_some).await;
    }

    /// Resolves `grace` after the stop was requested: what is still under way by then (a
    /// database that does not answer) is given up, so a stop never waits on the network.
    pub async fn wait_grace(&self, grace: Duration) {
        let mut rx = self.rx.clone();
        let at = match rx.wait_for(Option::is_some).await {
            Ok(at) => *at,
            Err(_) => None,
        };
        if let Some(at) = at {
            tokio::time::sleep_until((at + grace).into()).await;
        }
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
async fn os_signal() {
    crate::platform::ctrl_c_or_terminate().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_holder_sees_one_request() {
        let s = Shutdown::new();
        let other = s.clone();
        assert!(!other.is_requested());
        let waiter = tokio::spawn(async move { other.wait().await });
        s.request();
        waiter.await.unwrap();
        assert!(s.is_requested());
        s.wait().await; // already requested: resolves at once
    }
}
