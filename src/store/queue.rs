//! A write on its way through the writer's queue: the write itself, what applying it gave, and
//! where its answer goes once the transaction holding it is durable. Every kind of write is a
//! `Job` of its own input and output: a room change, or a [`WriteStep`] of some feature's,
//! which the queue runs without naming it.

use std::future::Future;

use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use super::dialect::Dialect;
use super::sql::AnyConnection;
use super::types::{RoomCommit, RoomWritten, StoreError};

/// What a caller of the writer gets back: its write (which the queue owned meanwhile) and
/// what it produced, once durable.
pub(super) type Reply<T, R> = oneshot::Receiver<Result<(T, R), StoreError>>;

/// A write waiting for the writer, what applying it produced, and where that goes.
pub(super) struct Job<T, R> {
    pub(super) input: T,
    /// Set when the write is applied (its value, or its refusal), and sent once the
    /// transaction holding it is durable. Applying the batch again replaces it.
    outcome: Option<Result<R, StoreError>>,
    reply: oneshot::Sender<Result<(T, R), StoreError>>,
}

impl<T, R> Job<T, R> {
    pub(super) fn new(input: T) -> (Self, Reply<T, R>) {
        let (reply, answer) = oneshot::channel();
        let job = Self {
            input,
            outcome: None,
            reply,
        };
        (job, answer)
    }

    /// Records what applying the write gave: a value or a refusal. Any other error is not an
    /// outcome but the batch's failure, handed back for the writer to deal with.
    pub(super) fn settle(&mut self, outcome: Result<R, StoreError>) -> Result<(), StoreError> {
        match outcome {
            Err(err) if !err.is_refusal() => Err(err),
            outcome => {
                self.outcome = Some(outcome);
                Ok(())
            }
        }
    }

    /// Answers the caller (who may have stopped waiting) with the outcome, once durable.
    pub(super) fn answer(self) {
        let outcome = match self.outcome {
            Some(outcome) => outcome.map(|value| (self.input, value)),
            // The writer settles every write of a batch before it commits; were one missed,
            // its caller hears so rather than waiting forever.
            None => Err(StoreError::WriterStopped),
        };
        let _ = self.reply.send(outcome);
    }

    /// Answers the caller with `err`: none of the write happened.
    pub(super) fn fail(self, err: StoreError) {
        let _ = self.reply.send(Err(err));
    }
}

/// A write that is not a room change, as its feature hands it to the writer: applied inside
/// the batch's transaction, on either database. The writer runs every one the same way and
/// names none of them.
pub(super) trait WriteStep: Send + Sync + 'static {
    /// What applying it produced, which its caller gets back once it is durable.
    type Output: Send + 'static;

    /// Applies the write on `conn`, inside the batch's transaction. A refusal
    /// ([`StoreError::is_refusal`]) is the write's outcome; any other error fails the batch.
    fn apply<D: Dialect>(
        &self,
        conn: &mut D::Connection,
    ) -> impl Future<Output = Result<Self::Output, StoreError>> + Send;
}

/// A queued write step whose kind the queue does not know.
pub(super) trait QueuedStep: Send {
    /// Applies it and settles its outcome.
    fn apply<'c>(&'c mut self, conn: AnyConnection<'c>) -> BoxFuture<'c, Result<(), StoreError>>;
    fn answer(self: Box<Self>);
    fn fail(self: Box<Self>, err: StoreError);
}

impl<S: WriteStep> QueuedStep for Job<S, S::Output> {
    fn apply<'c>(&'c mut self, conn: AnyConnection<'c>) -> BoxFuture<'c, Result<(), StoreError>> {
        Box::pin(async move {
            let outcome = match conn {
                AnyConnection::Sqlite(conn) => self.input.apply::<sqlx::Sqlite>(conn).await,
                AnyConnection::Postgres(conn) => self.input.apply::<sqlx::Postgres>(conn).await,
            };
            self.settle(outcome)
        })
    }

    fn answer(self: Box<Self>) {
        Job::answer(*self)
    }

    fn fail(self: Box<Self>, err: StoreError) {
        Job::fail(*self, err)
    }
}

/// One queued write: a room change (a batch applies those together, set-based; see
/// [`super::batch`]), or any other write step.
pub(super) enum Write {
    Room(Job<Box<RoomCommit>, RoomWritten>),
    Step(Box<dyn QueuedStep>),
}

/// Every feature's write reaches the queue as `job.into()`.
impl<S: WriteStep> From<Job<S, S::Output>> for Write {
    fn from(job: Job<S, S::Output>) -> Self {
        Write::Step(Box::new(job))
    }
}

impl Write {
    /// Answers the write with its outcome, now durable.
    pub(super) fn answer(self) {
        match self {
            Write::Room(job) => job.answer(),
            Write::Step(step) => step.answer(),
        }
    }

    /// Answers the write with `err`: none of it happened.
    pub(super) fn fail(self, err: StoreError) {
        match self {
            Write::Room(job) => job.fail(err),
            Write::Step(step) => step.fail(err),
        }
    }

    /// Applies the write inside the batch's transaction, unless it is a room change (those
    /// are applied together). An error is the batch's failure; a refusal is the write's
    /// outcome.
    pub(super) async fn apply_alone<D: Dialect>(
        &mut self,
        conn: &mut D::Connection,
    ) -> Result<(), StoreError> {
        match self {
            Write::Room(_) => Ok(()),
            Write::Step(step) => step.apply(D::any(conn)).await,
        }
    }
}
