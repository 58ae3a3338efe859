//! The engine's parts against simple references, one file a concept.

mod deferred;
mod die;
mod engine;
mod resources;
