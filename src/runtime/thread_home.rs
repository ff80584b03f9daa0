//! [`ThreadHome`]: a value that lives on an OS thread of its own, with a single-threaded runtime,
//! and is used by sending it closures.
//!
//! Engine processes are kept this way where their I/O must not share a thread with anything else:
//! an engine's output then wakes only its own thread, and that thread may block on the engine's
//! pipe (the position evaluator does) without stalling other engines or the caller.

use std::future::Future;
use std::thread::JoinHandle;

use anyhow::{Context, Result, anyhow};
use futures::future::LocalBoxFuture;
use tokio::sync::{mpsc, oneshot};

type Job<S> = Box<dyn for<'a> FnOnce(&'a mut S) -> LocalBoxFuture<'a, ()> + Send>;

/// A value of type `S` made on, kept on, and closed on a thread of its own.
pub struct ThreadHome<S> {
    jobs: Option<mpsc::UnboundedSender<Job<S>>>,
    thread: Option<JoinHandle<()>>,
}

impl<S: 'static> ThreadHome<S> {
    /// Start the thread and make the value there with `make`; `close` runs on the value when the
    /// home is dropped (quit the engines), before the thread ends. An error from `make` is
    /// returned here, after the thread has ended.
    pub async fn start<M, Fut, C>(name: String, make: M, close: C) -> Result<ThreadHome<S>>
    where
        M: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<S>>,
        C: for<'a> FnOnce(&'a mut S) -> LocalBoxFuture<'a, ()> + Send + 'static,
    {
        let (jobs, mut rx) = mpsc::unbounded_channel::<Job<S>>();
        let (started, started_rx) = oneshot::channel::<Result<()>>();
        let thread = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                // Engines' answers are read here: be run as soon as one arrives.
                crate::runtime::slice::ask_for_short_slices();
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = started.send(Err(anyhow!("cannot start a runtime: {e}")));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let mut value = match make().await {
                        Ok(v) => v,
                        Err(e) => {
                            let _ = started.send(Err(e));
                            return;
                        }
                    };
                    let _ = started.send(Ok(()));
                    while let Some(job) = rx.recv().await {
                        job(&mut value).await;
                    }
                    close(&mut value).await;
                });
            })
            .with_context(|| format!("cannot start thread `{name}`"))?;
        // Made before the start is awaited: if this future is dropped meanwhile, or the start
        // fails, dropping the home still waits for the thread (and closes what it made).
        let home = ThreadHome {
            jobs: Some(jobs),
            thread: Some(thread),
        };
        match started_rx.await {
            Ok(Ok(())) => Ok(home),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(anyhow!("thread `{name}` ended while starting")),
        }
    }

    /// Run `f` on the value, on its thread, and return what it returns. The future `f` makes runs
    /// there too, so it need not be `Send`. It runs to its end even if the caller stops waiting.
    pub async fn run<R, F>(&self, f: F) -> Result<R>
    where
        R: Send + 'static,
        F: for<'a> FnOnce(&'a mut S) -> LocalBoxFuture<'a, R> + Send + 'static,
    {
        self.send(f, None::<fn(&mut S) -> LocalBoxFuture<'_, ()>>)
            .await
    }

    /// As [`ThreadHome::run`], except that when the caller stops waiting (its future is
    /// dropped: a shutdown), `f`'s future is dropped where it stands and `abandoned` runs on the
    /// value instead (quit engines that were mid-search).
    pub async fn run_or_abandon<R, F, G>(&self, f: F, abandoned: G) -> Result<R>
    where
        R: Send + 'static,
        F: for<'a> FnOnce(&'a mut S) -> LocalBoxFuture<'a, R> + Send + 'static,
        G: for<'a> FnOnce(&'a mut S) -> LocalBoxFuture<'a, ()> + Send + 'static,
    {
        self.send(f, Some(abandoned)).await
    }

    async fn send<R, F, G>(&self, f: F, abandoned: Option<G>) -> Result<R>
    where
        R: Send + 'static,
        F: for<'a> FnOnce(&'a mut S) -> LocalBoxFuture<'a, R> + Send + 'static,
        G: for<'a> FnOnce(&'a mut S) -> LocalBoxFuture<'a, ()> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job<S> = Box::new(move |s| {
            Box::pin(async move {
                let mut reply = reply;
                let Some(abandoned) = abandoned else {
                    let _ = reply.send(f(s).await);
                    return;
                };
                let done = {
                    let work = f(s);
                    tokio::pin!(work);
                    tokio::select! {
                        r = &mut work => Some(r),
                        _ = reply.closed() => None,
                    }
                };
                match done {
                    Some(r) => {
                        let _ = reply.send(r);
                    }
                    None => abandoned(s).await,
                }
            })
        });
        self.jobs
            .as_ref()
            .expect("open until dropped")
            .send(job)
            .map_err(|_| anyhow!("the thread has ended"))?;
        answer.await.map_err(|_| anyhow!("the thread has ended"))
    }
}

impl<S> Drop for ThreadHome<S> {
    /// Close the channel and wait for the thread: the value has been closed when this returns.
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn the_value_lives_on_its_own_thread_and_is_closed_when_dropped() {
        let closed = Arc::new(AtomicUsize::new(0));
        let c = closed.clone();
        let home = ThreadHome::start(
            "test-home".into(),
            || async { Ok((std::thread::current().id(), 0u32)) },
            move |_: &mut (std::thread::ThreadId, u32)| {
                Box::pin(async move {
                    c.fetch_add(1, Ordering::SeqCst);
                })
            },
        )
        .await
        .unwrap();
        let (made_on, count) = home
            .run(|s| {
                Box::pin(async move {
                    s.1 += 1;
                    (s.0 == std::thread::current().id(), s.1)
                })
            })
            .await
            .unwrap();
        assert!(made_on, "jobs run on the thread the value was made on");
        assert_ne!(
            home.run(|s| Box::pin(async move { s.0 })).await.unwrap(),
            std::thread::current().id()
        );
        assert_eq!(count, 1);
        assert_eq!(closed.load(Ordering::SeqCst), 0);
        drop(home);
        assert_eq!(
            closed.load(Ordering::SeqCst),
            1,
            "closed before drop returns"
        );
    }

    #[tokio::test]
    async fn work_nobody_waits_for_is_abandoned_and_the_value_told() {
        let home = ThreadHome::start(
            "test-abandon".into(),
            || async { Ok(Vec::<&'static str>::new()) },
            |_| Box::pin(async {}),
        )
        .await
        .unwrap();
        let stuck = home.run_or_abandon(
            |log| {
                Box::pin(async move {
                    log.push("started");
                    std::future::pending::<()>().await;
                    log.push("finished");
                })
            },
            |log| Box::pin(async move { log.push("abandoned") }),
        );
        assert!(
            tokio::time::timeout(Duration::from_millis(50), stuck)
                .await
                .is_err()
        );
        let log = home
            .run(|log| Box::pin(async move { log.clone() }))
            .await
            .unwrap();
        assert_eq!(log, ["started", "abandoned"]);
        // Plain `run` work finishes even when its caller has gone.
        let _ = tokio::time::timeout(
            Duration::from_millis(1),
            home.run(|log| {
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    log.push("slow work done");
                })
            }),
        )
        .await;
        let log = home
            .run(|log| Box::pin(async move { log.clone() }))
            .await
            .unwrap();
        assert_eq!(log, ["started", "abandoned", "slow work done"]);
    }

    #[tokio::test]
    async fn a_failed_start_is_an_error_and_the_thread_is_gone() {
        let r = ThreadHome::<u32>::start(
            "test-fails".into(),
            || async { Err(anyhow!("no engine")) },
            |_| Box::pin(async {}),
        )
        .await;
        assert_eq!(r.err().unwrap().to_string(), "no engine");
    }
}
