//! The product's own types, in one home: the records the slices and the store pass around
//! (`records.rs`), and the values in them (ids, times, names, tokens, ratings), validated at
//! the edge so the core only ever sees well-formed ones.

pub mod audit;
pub mod chat;
pub mod credentials;
pub mod game_id;
pub mod game_name;
pub mod ids;
pub mod letters;
pub mod notices;
pub mod outgoing;
pub mod passwords;
pub mod public_url;
pub mod ratings;
pub mod records;
pub mod roles;
#[cfg(test)]
mod test_records;
pub mod time;
pub mod username;
pub mod webhooks;
