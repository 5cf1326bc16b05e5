//! A JavaScript heap in one block of memory that keeps its own book-keeping inside itself, so
//! that copying the block's used bytes out, and later back in, returns the heap (and the engine
//! whose every allocation came from it) exactly to the moment of the copy. That is what lets a
//! hook call start from a realm saved once per game instead of a realm made for every call
//! (`warm.rs`).
//!
//! The allocator is size classes over a bump pointer: a freed block goes on its class's list
//! and is handed out again for that class (a large one, for a somewhat smaller class too); the
//! last block handed out grows in place and, freed, goes back to the bump pointer, so a string
//! or array being built up does not leave a trail of smaller copies. Every block is preceded
//! by 16 bytes holding its class and the size asked for, and every list link is an offset
//! inside the block, so the block's bytes are all there is. The engine counts what it asked
//! for (as it does with `malloc`), so its allocation limit stays the limit a hook runs under;
//! the block is sized for what the classes waste on top of that.

use std::ptr::NonNull;

use rquickjs::allocator::Allocator;

/// Blocks (and so what they hand out) start on 16-byte boundaries, as `malloc`'s do.
const ALIGN: usize = 16;
/// Before each block: its class, and the size asked for.
const BLOCK_HEADER: usize = 16;
/// From this class up (64 KiB), a block freed from a class up to four above serves too.
const LARGE_CLASS: usize = SMALL_CLASSES + 6 * 4 + 3;
const LARGE_REACH: usize = 8;
/// Classes of 16, 32, … 1024 bytes, then four per doubling (1280, 1536, 1792, 2048, 2560, …).
const SMALL_CLASSES: usize = 64;
const SMALL_STEP: usize = 16;
const SMALL_MAX: usize = SMALL_CLASSES * SMALL_STEP;
const CLASSES: usize = SMALL_CLASSES + 4 * 40;

/// The book-keeping, at the start of the block.
#[repr(C)]
struct Book {
    /// The offset of the first byte never handed out.
    top: usize,
    /// The block's size.
    size: usize,
    /// For each class, the offset of the first free block of that class (0: none); each free
    /// block's first word holds the offset of the next.
    free: [usize; CLASSES],
}

const FIRST_BLOCK: usize = std::mem::size_of::<Book>().div_ceil(ALIGN) * ALIGN;

/// Above this many bytes of a call's leftovers, their pages are given back to the system when
/// the saved state is copied back in, so one hungry call does not leave the process large.
const RELEASE_ABOVE: usize = 4 << 20;

fn class_of(size: usize) -> Option<usize> {
    let size = size.max(1);
    if size <= SMALL_MAX {
        return Some(size.div_ceil(SMALL_STEP) - 1);
    }
    // 2^p < size <= 2^(p+1), in four steps of 2^(p-2).
    let p = usize::BITS - 1 - (size - 1).leading_zeros();
    let step = 1usize << (p - 2);
    let index = (size - (1usize << p)).div_ceil(step);
    let class = SMALL_CLASSES + (p as usize - 10) * 4 + (index - 1);
    (class < CLASSES).then_some(class)
}

fn class_size(class: usize) -> usize {
    if class < SMALL_CLASSES {
        return (class + 1) * SMALL_STEP;
    }
    let k = class - SMALL_CLASSES;
    let p = 10 + k / 4;
    (1usize << p) + (k % 4 + 1) * (1usize << (p - 2))
}

/// The block. Dropping it unmaps it: whatever engine lived in it must be gone first.
pub struct Arena {
    base: NonNull<u8>,
    size: usize,
}

impl Arena {
    /// Reserves `size` bytes (pages are only backed once touched).
    pub fn new(size: usize) -> std::io::Result<Self> {
        // SAFETY: an anonymous private mapping at an address of the system's choosing.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let arena = Self {
            base: NonNull::new(base.cast()).expect("mmap never answers null on success"),
            size,
        };
        arena.reset();
        Ok(arena)
    }

    fn book(&self) -> *mut Book {
        self.base.as_ptr().cast()
    }

    /// Forgets everything in the block: the next allocation starts at its beginning.
    pub fn reset(&self) {
        // SAFETY: the book lies at the start of the mapping, which is larger than it.
        unsafe {
            self.book().write(Book {
                top: FIRST_BLOCK,
                size: self.size,
                free: [0; CLASSES],
            })
        }
    }

    /// An allocator handing out this block's memory, for an engine's runtime.
    pub fn allocator(&self) -> ArenaAllocator {
        ArenaAllocator { base: self.base }
    }

    /// A copy of the block as it is now: every byte ever handed out, and the book.
    pub fn save(&self) -> Box<[u8]> {
        // SAFETY: `top` never passes the mapping's end; the bytes below it are initialised
        // (the book, block headers, and what the engine wrote or was handed as junk).
        unsafe {
            let top = (*self.book()).top;
            std::slice::from_raw_parts(self.base.as_ptr(), top).into()
        }
    }

    /// Puts `saved` (from [`Arena::save`] on this block) back: the block is as it was then.
    pub fn restore(&self, saved: &[u8]) {
        debug_assert!(saved.len() <= self.size);
        // SAFETY: `saved` fits in the mapping, and nothing else refers to its bytes now.
        unsafe {
            let top = (*self.book()).top;
            std::ptr::copy_nonoverlapping(saved.as_ptr(), self.base.as_ptr(), saved.len());
            let keep = saved.len().next_multiple_of(page_size());
            if top > keep + RELEASE_ABOVE {
                libc::madvise(
                    self.base.as_ptr().add(keep).cast(),
                    top - keep,
                    libc::MADV_DONTNEED,
                );
            }
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.size) };
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf only reads a constant.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// The engine's allocator over an [`Arena`]; it holds nothing but where the block is.
pub struct ArenaAllocator {
    base: NonNull<u8>,
}

impl ArenaAllocator {
    fn book(&mut self) -> &mut Book {
        // SAFETY: the arena outlives every runtime using its allocator (see `warm.rs`), and
        // the engine calls its allocator from one thread at a time.
        unsafe { &mut *self.base.as_ptr().cast::<Book>() }
    }

    fn at(&self, offset: usize) -> *mut u8 {
        // SAFETY: offsets come from the book and stay inside the mapping.
        unsafe { self.base.as_ptr().add(offset) }
    }

    fn offset_of(&self, ptr: *mut u8) -> usize {
        ptr as usize - self.base.as_ptr() as usize
    }

    /// A free block of `class`, or for a large class one of a class a little above.
    fn reuse(&mut self, class: usize) -> Option<*mut u8> {
        let reach = if class >= LARGE_CLASS { LARGE_REACH } else { 0 };
        let book = self.book();
        let found = (class..=(class + reach).min(CLASSES - 1)).find(|&c| book.free[c] != 0)?;
        let head = book.free[found];
        let block = self.at(head);
        // SAFETY: a free block's first word is the offset of the next of its class.
        self.book().free[found] = unsafe { block.cast::<usize>().read() };
        Some(block)
    }

    /// The block's class and the size it was asked for.
    unsafe fn header(ptr: *mut u8) -> (usize, usize) {
        let header = ptr.sub(BLOCK_HEADER).cast::<usize>();
        (header.read(), header.add(1).read())
    }

    unsafe fn set_size(ptr: *mut u8, size: usize) {
        ptr.sub(BLOCK_HEADER).cast::<usize>().add(1).write(size);
    }

    /// Whether the block ends where nothing has been handed out yet.
    fn is_last(&mut self, ptr: *mut u8, class: usize) -> bool {
        self.offset_of(ptr) + class_size(class) == self.book().top
    }
}

// SAFETY: every block handed out is 16-byte aligned, at least the size asked for, and lies
// inside the mapping; `usable_size` is the size it was asked for (or grown to).
unsafe impl Allocator for ArenaAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        let size = size.max(1);
        let Some(class) = class_of(size) else {
            return std::ptr::null_mut();
        };
        let block = match self.reuse(class) {
            Some(block) => block,
            None => {
                let book = self.book();
                let start = book.top;
                let end = start + BLOCK_HEADER + class_size(class);
                if end > book.size {
                    return std::ptr::null_mut();
                }
                book.top = end;
                // SAFETY: the header lies inside the mapping, below the new top.
                unsafe {
                    let block = self.at(start).add(BLOCK_HEADER);
                    block.sub(BLOCK_HEADER).cast::<usize>().write(class);
                    block
                }
            }
        };
        // SAFETY: the block was just handed out, its header is its own.
        unsafe { Self::set_size(block, size) };
        block
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(bytes) = count.checked_mul(size) else {
            return std::ptr::null_mut();
        };
        let block = self.alloc(bytes);
        if !block.is_null() {
            // SAFETY: the block holds at least `bytes`.
            unsafe { block.write_bytes(0, bytes) };
        }
        block
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        let (class, _) = Self::header(ptr);
        if self.is_last(ptr, class) {
            self.book().top = self.offset_of(ptr) - BLOCK_HEADER;
            return;
        }
        let offset = self.offset_of(ptr);
        let next = self.book().free[class];
        ptr.cast::<usize>().write(next);
        self.book().free[class] = offset;
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        let new_size = new_size.max(1);
        let (class, old_size) = Self::header(ptr);
        if new_size <= class_size(class) {
            Self::set_size(ptr, new_size);
            return ptr;
        }
        let Some(new_class) = class_of(new_size) else {
            return std::ptr::null_mut();
        };
        if self.is_last(ptr, class) {
            let end = self.offset_of(ptr) + class_size(new_class);
            if end > self.book().size {
                return std::ptr::null_mut();
            }
            self.book().top = end;
            ptr.sub(BLOCK_HEADER).cast::<usize>().write(new_class);
            Self::set_size(ptr, new_size);
            return ptr;
        }
        let moved = self.alloc(new_size);
        if !moved.is_null() {
            std::ptr::copy_nonoverlapping(ptr, moved, old_size);
            self.dealloc(ptr);
        }
        moved
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        Self::header(ptr).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_gets_the_smallest_class_that_holds_it() {
        let mut last = 0;
        for size in 1..=(1 << 20) {
            let class = class_of(size).unwrap();
            assert!(class_size(class) >= size, "{size}");
            assert!(class == 0 || class_size(class - 1) < size, "{size}");
            assert!(class >= last);
            last = class;
        }
        assert_eq!(class_size(class_of(1025).unwrap()), 1280);
        assert_eq!(class_size(class_of(2048).unwrap()), 2048);
        assert_eq!(class_size(class_of(2049).unwrap()), 2560);
    }

    #[test]
    fn restoring_a_saved_block_undoes_everything_since() {
        let arena = Arena::new(1 << 20).unwrap();
        let mut heap = arena.allocator();
        let kept = heap.alloc(100);
        unsafe { kept.write_bytes(7, 100) };
        let saved = arena.save();
        let before: Vec<usize> = (0..50).map(|_| heap.alloc(40) as usize).collect();
        unsafe {
            kept.write_bytes(9, 100);
            heap.dealloc(kept);
        }
        arena.restore(&saved);
        // The same allocations come out in the same places, and what was kept is as it was.
        let after: Vec<usize> = (0..50).map(|_| heap.alloc(40) as usize).collect();
        assert_eq!(before, after);
        assert_eq!(unsafe { *kept.add(99) }, 7);
        assert_eq!(unsafe { ArenaAllocator::usable_size(kept) }, 100);
    }

    #[test]
    fn freed_blocks_are_handed_out_again_and_the_end_is_a_limit() {
        let arena = Arena::new(64 << 10).unwrap();
        let mut heap = arena.allocator();
        let a = heap.alloc(1000);
        let b = heap.alloc(1000);
        unsafe { heap.dealloc(a) };
        assert_eq!(heap.alloc(1000), a);
        // Not the last block: it moves, keeping its bytes.
        unsafe { a.write_bytes(3, 1000) };
        let grown = unsafe { heap.realloc(a, 5000) };
        assert!(!grown.is_null() && grown != a);
        assert!((0..1000).all(|i| unsafe { *grown.add(i) } == 3));
        // The last block grows where it is, and freed goes back to the bump pointer.
        let in_place = unsafe { heap.realloc(grown, 9000) };
        assert_eq!(in_place, grown);
        assert_eq!(unsafe { ArenaAllocator::usable_size(in_place) }, 9000);
        unsafe { heap.dealloc(in_place) };
        assert_eq!(heap.alloc(20000), grown);
        unsafe { heap.dealloc(b) };
        assert!(heap.alloc(1 << 20).is_null());
        assert!(heap.calloc(usize::MAX, 2).is_null());
        let zeroed = heap.calloc(10, 10);
        assert!((0..100).all(|i| unsafe { *zeroed.add(i) } == 0));
    }
}
