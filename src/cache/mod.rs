//! What the slices keep in memory between requests: a cache bounded whatever the keys it sees,
//! the rule for when what a cache kept may still be trusted on a shared database, and a cache
//! of database rows that follows that rule.

mod bounded;
mod trust;
mod while_alone;

pub use bounded::BoundedCache;
pub use trust::LastLook;
pub use while_alone::{Epoch, WhileAlone};
