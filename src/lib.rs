//! Turnhouse: a self-hostable backend for turn-based games.
//!
//! A game is four hooks ([`game::Game`]); the [`engine`] applies them to rooms with versioned
//! compare-and-set commits through the [`store`]; the [`api`] serves it all over REST.

pub mod accounts;
pub mod api;
pub mod cache;
pub mod catalog;
pub mod chat;
pub mod config;
pub mod dev;
pub mod domain;
pub mod draining;
pub mod engine;
pub mod frontend;
pub mod game;
pub mod games;
#[cfg(test)]
mod layers;
pub mod live;
pub mod metrics;
pub mod moderation;
pub mod notifications;
pub mod outbound;
pub mod outbox;
pub mod problem;
pub mod sandbox;
pub mod seed;
pub mod services;
pub mod standing;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod tls;
pub mod views;
pub mod webhooks;
