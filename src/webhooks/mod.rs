//! Webhooks: events that leave the server, signed as Standard Webhooks specifies.

pub mod signing;
