//! Turnhouse: a self-hostable backend for turn-based games.
//!
//! A game is four hooks ([`game::Game`]); the [`engine`] applies them to rooms with versioned
//! compare-and-set commits through the [`store`]; the [`api`] serves it all over REST.

pub mod api;
pub mod config;
pub mod dev;
pub mod domain;
pub mod engine;
pub mod frontend;
pub mod game;
pub mod games;
#[cfg(test)]
mod layers;
pub mod live;
pub mod metrics;
pub mod model;
pub mod sandbox;
pub mod seed;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod views;
