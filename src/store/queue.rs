//! A write on its way through the writer's queue: the write itself, what applying it gave, and
//! where its answer goes once the transaction holding it is durable. Every kind of write is a
//! `Job` of its own input and output; the queue names none of them.

use tokio::sync::oneshot;

use super::types::StoreError;

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
