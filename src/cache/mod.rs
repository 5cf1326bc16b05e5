//! What the slices keep in memory between requests: a cache bounded whatever the keys it sees,
//! and the rule for when what a cache kept may still be trusted on a shared database.

mod bounded;
mod trust;

pub use bounded::BoundedCache;
pub use trust::LastLook;
