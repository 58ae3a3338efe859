//! The engine's parts against simple references, one file a concept.

mod die;
mod engine;
mod resources;
