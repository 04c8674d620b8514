//! How a Direct3D resource is shared with an OpenCL context: one seam.
//!
//! A strategy is chosen once per memory object ([`share`]: the request's facts, then the pure
//! [`choose_with`] decision, then the strategy's [`Make`]r, the one seam where it is chosen) and
//! kept with it as a [`SharingStrategy`]: its maker creates the OpenCL object; it carries out each
//! acquire and release through a [`HandOff`], describes itself, and is destroyed (dropped) with
//! the memory object. `api/` calls nothing else of it.
//!
//! - [`request`]: what one create call asks for, and the plain OpenCL object of its size.
//! - [`facts`]: what the decision and the strategies need to know, asked once.
//! - [`decision`]: the pure decision, public so `dxcl info` can describe it without creating
//!   anything.
//! - [`host_pointer`], [`staging`], [`external_memory`], [`external_copy`], [`shadow_copy`]: the
//!   five strategies, each with its `Maker`.
//! - [`hand_off`]: one acquire or release call, with what strategies do together in it.
//! - [`external`]: the platform's external memory and semaphores, shared by the two external
//!   strategies.

use std::sync::Arc;

use opencl_sys::{cl_event, cl_int, cl_mem};

use crate::core::signal::Signal;
use crate::d3d::interop::Interop;
use facts::Facts;

mod decision;
pub(crate) mod external;
mod external_copy;
mod external_memory;
mod facts;
mod hand_off;
mod host_pointer;
mod request;
mod shadow_copy;
mod staging;

pub use decision::*;
use hand_off::{enqueue_external, terminated_if_refused};
pub(crate) use hand_off::{After, HandOff};
pub(crate) use host_pointer::finish_copies;
pub(crate) use request::Request;

/// One memory object's way of being shared. Implementations hold what the object needs beyond
/// its `cl_mem` (interop interfaces, staging resources, imported shadows) and release it when
/// dropped, which is the strategy's "destroy": the registry drops it with the memory object's
/// entry, outside its lock.
pub(crate) trait SharingStrategy: Send + Sync {
    /// The strategy and why it was chosen (`dxcl info`, `DXCL_LOG`, the resource's tag).
    fn decision(&self) -> Decision;

    /// Whether the `cl_mem` uses the resource's own memory in place, so that memory must live
    /// as long as the platform holds the object (not only the application).
    fn aliases_resource_memory(&self) -> bool {
        false
    }

    /// For a strategy that aliases the resource's memory: the application's last reference is
    /// gone while the platform may still run commands on the object. Keeps the memory alive
    /// until `destroyed` is set (the platform destroyed the object) without keeping the
    /// resource's reference, which "will be decremented when the OpenCL reference count on the
    /// returned OpenCL memory object drops to zero". False when it cannot.
    fn keep_memory_until(&self, _destroyed: Arc<Signal>) -> bool {
        false
    }

    /// Makes what Direct3D did before this call visible to OpenCL commands after it: work now
    /// on the D3D side, OpenCL commands through `h`.
    fn acquire(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int>;

    /// Hands the object back: OpenCL commands through `h`, after all earlier work of the queue
    /// and the wait list ([`HandOff::release_wait`]).
    fn release(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int>;

    /// Whether [`release`](Self::release) brackets the object with the platform's external
    /// release ([`HandOff::import`]).
    fn imports(&self) -> bool {
        false
    }

    /// In a release whose wait list holds a user event still unset, after the platform's
    /// external release of the call's imported objects ([`HandOff::imports_now`]): the
    /// commands of an importing strategy that wait for the wait list.
    fn release_commands(&self, _mem: cl_mem, _h: &mut HandOff<'_>) -> Result<(), cl_int> {
        Ok(())
    }

    /// After [`release`](Self::release), once the call's event `done` exists: later Direct3D
    /// work must wait for it.
    fn released(&self, h: &mut HandOff<'_>, done: cl_event) -> Result<(), cl_int>;

    /// The application's last reference to `mem` goes (on its thread, before the release is
    /// forwarded): let go of what the strategy holds for hand-offs, and if the object is still
    /// `acquired`, hand back to the platform what the acquire took from it.
    fn let_go(&self, _mem: cl_mem, _acquired: bool) {}

    /// The acquire of `mem` alone in its call ([`Alone`]), done whole without a [`HandOff`],
    /// where the strategy has a lean way: on a CPU whose caches lost them, each line of code
    /// and data the call touches costs a fetch (docs/benchmarks.md, "A cold CPU on demand").
    /// None: nothing was done, and the call takes the general path.
    fn acquire_alone(&self, _mem: cl_mem, _call: Alone) -> Option<Result<(), cl_int>> {
        None
    }

    /// The release of `mem` alone in its call, as [`acquire_alone`](Self::acquire_alone).
    fn release_alone(&self, _mem: cl_mem, _call: Alone) -> Option<Result<(), cl_int>> {
        None
    }
}

/// An acquire or release call of one object with no wait list and no event asked for: the
/// usual call of an idle hand-off.
#[derive(Clone, Copy)]
pub(crate) struct Alone {
    pub queue: opencl_sys::cl_command_queue,
    pub facts: crate::cl::QueueFacts,
    /// Implicit synchronisation (see [`HandOff::sync`]).
    pub sync: bool,
}

/// Why a chosen strategy could not make the object.
pub(crate) enum Failure {
    /// The strategy does not apply after all: staging copies instead, for this reason.
    Fallback(&'static str),
    /// The create call fails with this error.
    Error(cl_int),
}

impl From<cl_int> for Failure {
    fn from(e: cl_int) -> Failure {
        Failure::Error(e)
    }
}

/// A new memory object and the strategy it keeps.
pub(crate) struct Shared {
    pub mem: cl_mem,
    pub strategy: Arc<dyn SharingStrategy>,
}

/// What a strategy makes the memory object from besides the request: the resource's interop
/// object and what the context offers the external strategies (both found by [`Facts`]).
#[derive(Clone, Copy)]
struct Materials<'a> {
    interop: Option<&'a Interop>,
    context: &'a external::Context,
}

/// What a maker gives: the memory object and the strategy it keeps.
type Made = Result<(cl_mem, Arc<dyn SharingStrategy>), Failure>;

/// How one strategy makes the memory object: each strategy's `Maker`, the one the decision
/// names found by [`maker`].
trait Make: Sync {
    fn make(&self, req: &Request, with: Materials<'_>, decision: Decision) -> Made;
}

/// The maker of `strategy`.
fn maker(strategy: Strategy) -> &'static dyn Make {
    match strategy {
        Strategy::HostPointer => &host_pointer::Maker,
        Strategy::StagingCopy => &staging::Maker,
        Strategy::ExternalMemory => &external_memory::Maker,
        Strategy::ExternalCopy => &external_copy::Maker,
        Strategy::ShadowCopy => &shadow_copy::Maker,
    }
}

/// Chooses the strategy for `req` and makes the memory object with it: the facts first, then
/// the pure decision, then the strategy; one that cannot make the object after all gives way
/// to staging copies, saying why.
pub(crate) fn share(req: &Request) -> Result<Shared, cl_int> {
    let facts = Facts::gather(req);
    let mut decision = choose_with(&facts.inputs, facts.external.as_ref());
    let with = Materials {
        interop: facts.interop.as_ref(),
        context: &facts.context,
    };
    loop {
        log_once("clCreateFromD3D resource", decision);
        match maker(decision.strategy).make(req, with, decision) {
            Ok((mem, strategy)) => return Ok(Shared { mem, strategy }),
            Err(Failure::Error(e)) => return Err(e),
            Err(Failure::Fallback(reason)) if decision.strategy != Strategy::StagingCopy => {
                decision = Decision {
                    strategy: Strategy::StagingCopy,
                    reason,
                }
            }
            Err(Failure::Fallback(_)) => return Err(opencl_sys::CL_OUT_OF_RESOURCES),
        }
    }
}
