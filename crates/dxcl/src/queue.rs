//! [`Queue`] and the [`Acquired`] guard: shared objects reach kernels only while acquired.

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr;

use opencl3::command_queue::CommandQueue;
use opencl3::event::Event;
use opencl3::memory::{Buffer, ClMem, Image};
use opencl3::types::{cl_event, cl_mem, cl_uint};

use crate::api::{Api, EnqueueObjects, EntryPoints};
use crate::com::Com;
use crate::error::{Error, Result};
use crate::mem::{Shared, SharedBuffer, SharedImage, TOKEN};

/// A command queue of a shared [`Context`](crate::Context), borrowed from `opencl3`
/// ([`Context::queue`](crate::Context::queue)), on which shared objects are acquired and released.
pub struct Queue<'a, A: Api> {
    // The context's entry points; the queue needs nothing else of it.
    entry: &'a EntryPoints,
    queue: &'a CommandQueue,
    // Borrowed from a context that holds the device: neither `Send` nor `Sync`, as the context.
    _device: PhantomData<&'a Com<A::Device>>,
}

impl<'a, A: Api> Queue<'a, A> {
    pub(crate) fn new(entry: &'a EntryPoints, queue: &'a CommandQueue) -> Queue<'a, A> {
        Queue {
            entry,
            queue,
            _device: PhantomData,
        }
    }

    /// The `opencl3` command queue.
    pub fn command_queue(&self) -> &'a CommandQueue {
        self.queue
    }

    /// Acquires `objects` for OpenCL (`clEnqueueAcquireD3D1xObjects…`): unless the context asked
    /// for `CL_CONTEXT_INTEROP_USER_SYNC`, commands enqueued after it see all Direct3D work
    /// issued before. The guard releases them when dropped; [`Acquired::release`] does it
    /// explicitly and returns the release's event.
    ///
    /// Acquisition is per context: the objects are acquired for every queue of it.
    ///
    /// # Errors
    /// `D3D1xResourceAlreadyAcquired` when one is acquired already (by another guard, or one
    /// that was forgotten); the status otherwise.
    pub fn acquire<'g>(&'g self, objects: &[&'g dyn Shared<A>]) -> Result<Acquired<'g, A>> {
        self.acquire_after(objects, &[])
    }

    /// As [`Queue::acquire`], after the events in `wait` complete.
    ///
    /// # Errors
    /// As [`Queue::acquire`]; [`Error::InvalidEventWaitList`] for an invalid event.
    pub fn acquire_after<'g>(
        &'g self,
        objects: &[&'g dyn Shared<A>],
        wait: &[cl_event],
    ) -> Result<Acquired<'g, A>> {
        let mems: Vec<cl_mem> = objects.iter().map(|o| o.raw_mem(TOKEN)).collect();
        let event = enqueue(self.entry.acquire, self.queue, &mems, wait)?;
        Ok(Acquired {
            queue: self.queue,
            release: self.entry.release,
            mems,
            event,
            released: false,
            _objects: PhantomData,
        })
    }
}

impl<A: Api> fmt::Debug for Queue<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("api", &A::NAME)
            .field("queue", &self.queue.get())
            .finish()
    }
}

/// One acquire or release: `(0, NULL)` when `mems` is empty, as the extension allows.
fn enqueue(
    call: EnqueueObjects,
    queue: &CommandQueue,
    mems: &[cl_mem],
    wait: &[cl_event],
) -> Result<Event> {
    let list = |n: usize, p: *const _| if n == 0 { ptr::null() } else { p };
    let mut event: cl_event = ptr::null_mut();
    // SAFETY: a live queue; `mems` and `wait` are valid for their lengths (null when empty), and
    // `event` receives one new reference, which the `Event` takes over.
    Error::check(unsafe {
        call(
            queue.get(),
            mems.len() as cl_uint,
            list(mems.len(), mems.as_ptr()),
            wait.len() as cl_uint,
            list(wait.len(), wait.as_ptr()),
            &mut event,
        )
    })?;
    Ok(Event::new(event))
}

/// Shared objects acquired by OpenCL, released when the guard is dropped (enqueued, not waited
/// for) or by [`Acquired::release`].
///
/// The guard is the only way to an object's `cl_mem`: [`Acquired::buffer`] and
/// [`Acquired::image`] lend `opencl3` views that cannot outlive it, so a kernel argument set
/// from them is set while the object is acquired:
///
/// ```compile_fail,E0505
/// # fn f(q: &dxcl::Queue<'_, dxcl::D3D11>, b: &dxcl::SharedBuffer<dxcl::D3D11>) -> dxcl::Result<()> {
/// let acquired = q.acquire(&[b])?;
/// let view = acquired.buffer::<u32>(b);
/// acquired.release()?; // error: `acquired` is still borrowed by `view`
/// let _ = &*view;
/// # Ok(()) }
/// ```
///
/// Releases are enqueued on the queue that acquired, so on an in-order queue they follow the
/// kernels enqueued before; on an out-of-order queue use [`Acquired::release_after`] with the
/// kernels' events. A kernel whose argument was set from a view and that is enqueued again after
/// the release fails with `D3D1xResourceNotAcquired`.
#[must_use = "dropping the guard releases the objects at once"]
pub struct Acquired<'g, A: Api> {
    queue: &'g CommandQueue,
    release: EnqueueObjects,
    mems: Vec<cl_mem>,
    event: Event,
    released: bool,
    _objects: PhantomData<&'g A>,
}

impl<'g, A: Api> Acquired<'g, A> {
    /// The acquire's event (`CL_COMMAND_ACQUIRE_D3D1x_OBJECTS_KHR`).
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// Whether `object` is among the objects this guard acquired.
    pub fn contains(&self, object: &dyn Shared<A>) -> bool {
        self.mems.contains(&object.raw_mem(TOKEN))
    }

    fn member(&self, object: &dyn Shared<A>) -> cl_mem {
        let mem = object.raw_mem(TOKEN);
        assert!(
            self.mems.contains(&mem),
            "dxcl: the object was not acquired by this guard"
        );
        mem
    }

    /// `buffer` as an `opencl3` buffer of `T`, for kernel arguments
    /// (`ExecuteKernel::set_arg(&view)`) and reads and writes (`enqueue_read_buffer(&view, …)`),
    /// valid while the guard lives.
    ///
    /// # Panics
    /// When `buffer` is not among the acquired objects.
    pub fn buffer<T>(&self, buffer: &SharedBuffer<A>) -> BufferRef<'_, T> {
        BufferRef {
            buffer: ManuallyDrop::new(Buffer::new(self.member(buffer))),
            _guard: PhantomData,
        }
    }

    /// `image` as an `opencl3` image, for kernel arguments and image reads and writes, valid
    /// while the guard lives.
    ///
    /// # Panics
    /// When `image` is not among the acquired objects.
    pub fn image(&self, image: &SharedImage<A>) -> ImageRef<'_> {
        ImageRef {
            image: ManuallyDrop::new(Image::new(self.member(image))),
            _guard: PhantomData,
        }
    }

    /// The raw `cl_mem` of an acquired object, for calls `opencl3` does not wrap.
    ///
    /// # Panics
    /// When `object` is not among the acquired objects.
    pub fn raw(&self, object: &dyn Shared<A>) -> cl_mem {
        self.member(object)
    }

    /// Releases the objects to Direct3D (`clEnqueueRelease…`) and returns the release's event
    /// (`CL_COMMAND_RELEASE_D3D1x_OBJECTS_KHR`). Direct3D work issued after this call waits for
    /// it, unless the context uses `CL_CONTEXT_INTEROP_USER_SYNC`.
    ///
    /// # Errors
    /// The status of the release; the objects stay acquired then.
    pub fn release(self) -> Result<Event> {
        self.release_after(&[])
    }

    /// As [`Acquired::release`], after the events in `wait` complete (the kernels' events on an
    /// out-of-order queue).
    ///
    /// # Errors
    /// As [`Acquired::release`].
    pub fn release_after(mut self, wait: &[cl_event]) -> Result<Event> {
        // Marked first: on an error the objects stay acquired, and the drop must not try again.
        self.released = true;
        enqueue(self.release, self.queue, &self.mems, wait)
    }
}

impl<A: Api> Drop for Acquired<'_, A> {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        // Enqueued, not waited for: dropping must not block. A failure can only be reported.
        let mut none: cl_event = ptr::null_mut();
        let (n, list) = (self.mems.len() as cl_uint, self.mems.as_ptr());
        let list = if n == 0 { ptr::null() } else { list };
        // SAFETY: a live queue and `n` memory objects (null when none); the event out-pointer is
        // valid and the event, if any, released at once.
        let status =
            unsafe { (self.release)(self.queue.get(), n, list, 0, ptr::null(), &mut none) };
        if status != 0 {
            eprintln!(
                "dxcl: releasing shared objects on drop failed: {}",
                Error::from_code(status)
            );
        } else if !none.is_null() {
            drop(Event::new(none));
        }
    }
}

impl<A: Api> fmt::Debug for Acquired<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acquired")
            .field("api", &A::NAME)
            .field("objects", &self.mems.len())
            .finish_non_exhaustive()
    }
}

/// A shared buffer as an `opencl3` [`Buffer<T>`], lent by an [`Acquired`] guard.
///
/// Derefs to `Buffer<T>`, and has its layout (`repr(transparent)` over the `cl_mem`), so both
/// `set_arg(&view)` and `set_arg(&*view)` pass the memory object.
#[repr(transparent)]
pub struct BufferRef<'g, T> {
    // Never dropped: the guard lends the handle, it gives no reference.
    buffer: ManuallyDrop<Buffer<T>>,
    _guard: PhantomData<&'g ()>,
}

impl<T> fmt::Debug for BufferRef<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BufferRef({:p})", self.buffer.get())
    }
}

impl<T> Deref for BufferRef<'_, T> {
    type Target = Buffer<T>;
    fn deref(&self) -> &Buffer<T> {
        &self.buffer
    }
}

/// A shared image as an `opencl3` [`Image`], lent by an [`Acquired`] guard. Derefs to `Image`
/// and has its layout, as [`BufferRef`].
#[repr(transparent)]
pub struct ImageRef<'g> {
    // Never dropped: the guard lends the handle, it gives no reference.
    image: ManuallyDrop<Image>,
    _guard: PhantomData<&'g ()>,
}

impl fmt::Debug for ImageRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ImageRef({:p})", self.image.get())
    }
}

impl Deref for ImageRef<'_> {
    type Target = Image;
    fn deref(&self) -> &Image {
        &self.image
    }
}
