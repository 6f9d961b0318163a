//! Layer 1 of skillgate: the Cedar policy gate. It answers "may this agent execute this
//! skill, here, now?" before anything else looks at the code.
//!
//! - The **schema** and **default policies** are data in `rules/policies/`, embedded as the
//!   built-in defaults ([`BUILTIN_SCHEMA`], [`BUILTIN_POLICIES`]); a folder of your own
//!   replaces them ([`PolicySources::policies`]). The **base policies** (tenant isolation,
//!   the code right, quarantine: [`BASE_POLICIES`]) are always loaded on top; only a named
//!   setting turns one off, and every decision then says so.
//! - **Entities** (tenants, agents, agent groups, builders) come from a Cedar entities
//!   JSON file; a **skill**'s tenant, owner and visibility from the operator's
//!   [`catalogue`] record for its digest (a skill without one is its caller's own code);
//!   the **caller** (agent id, tenant) from whoever calls the pipeline; quarantine from a
//!   [`QuarantineSource`](skillgate_core::QuarantineSource). See [`entities`].
//! - **Grants** for restricted skills are links of a policy template, one per grant, from
//!   a grants file ([`grants`]).
//! - Everything is validated strictly at load; any error refuses to start and names the
//!   file, line and problem ([`LoadError`]).
//! - Deciding fails closed: a policy whose evaluation errs denies the request
//!   (Cedar alone would skip it), and so does a request that cannot be built.
//!
//! - **Publishing** to the registry is its own small policy set ([`publish`]), decided
//!   by [`Policy::authorize_publish`].
//!
//! Use it alone with [`Policy::authorize`], or as a tower layer with [`PolicyLayer`].

mod decision;
mod error;
mod gate;
mod index;
mod json_array;
mod layer;
mod load;
mod request;
mod tenancy;

pub mod catalogue;
pub mod fuzz;
pub mod listing;
pub mod publish;
pub mod testfile;

pub use catalogue::{Catalogue, Record};
pub use decision::{Decision, DecisionError, PolicyDecision, Verdict};
pub use error::LoadError;
pub use gate::{Policy, RunLimits};
pub use layer::{
    BASE_LIFTED, DEFAULT_DENY, PolicyLayer, PolicyService, REQUEST_ERROR, deny_findings,
    lifted_findings,
};
pub use load::{
    BASE_POLICIES, BASE_POLICY_IDS, BUILTIN_POLICIES, BUILTIN_SCHEMA, MAX_FILE_BYTES, PolicySources,
};
pub use publish::{PublishGate, PublishSkill, Publisher};
pub use request::{Action, RunFacts};

/// Where agents, groups, builders and tenants come from, and how a request is built.
pub mod entities {
    #![doc = include_str!("../ENTITIES.md")]
}

/// The grants file: one template link per grant.
pub mod grants {
    #![doc = include_str!("../GRANTS.md")]
}
