//! One shutdown signal that every loop holds: Ctrl-C or SIGTERM (or a test) requests it once, and
//! everyone waiting sees it, however many times they ask.

use tokio::sync::watch;

/// A cloneable handle on "stop now". Cheap to poll, cheap to await.
#[derive(Clone, Debug)]
pub struct Shutdown {
    rx: watch::Receiver<bool>,
    tx: std::sync::Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

impl Shutdown {
    /// A signal nobody has requested yet; request it with [`Shutdown::request`].
    pub fn new() -> Self {
        let (tx, rx) = watch::channel(false);
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
        self.tx.send_replace(true);
    }

    pub fn is_requested(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves once a stop is requested (at once if it already was).
    pub async fn wait(&self) {
        let mut rx = self.rx.clone();
        // An error means every sender is gone, which cannot happen while we hold one.
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
async fn os_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => ctrl_c.await,
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
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
