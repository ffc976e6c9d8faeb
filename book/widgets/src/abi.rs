//! The module's C interface: the page writes a request into the module's memory, calls
//! [`widgets_request`] and reads the answer back.
//!
//! ```text
//! ptr = widgets_alloc(len)            // room for the request's UTF-8 bytes
//! ok  = widgets_request(ptr, len)     // 1: an answer, 0: an error message (frees ptr)
//! text at widgets_answer_ptr(), widgets_answer_len() bytes long, valid until the next call
//! ```

use std::cell::RefCell;

thread_local! {
    /// The last answer, kept until the next request so that the page can read it.
    static ANSWER: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Room for `len` bytes in the module's memory, for the page to write a request into.
#[unsafe(no_mangle)]
pub extern "C" fn widgets_alloc(len: usize) -> *mut u8 {
    let mut bytes = Vec::<u8>::with_capacity(len);
    let ptr = bytes.as_mut_ptr();
    std::mem::forget(bytes);
    ptr
}

/// Answers the request of `len` bytes at `ptr` (allocated by [`widgets_alloc`], freed
/// here). Returns 1 when the answer is a result, 0 when it is an error message.
///
/// # Safety
/// `ptr` must come from `widgets_alloc(len)` and hold `len` bytes written by the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn widgets_request(ptr: *mut u8, len: usize) -> u32 {
    // SAFETY: the caller allocated `len` bytes at `ptr` with widgets_alloc and filled them.
    let bytes = unsafe { Vec::from_raw_parts(ptr, len, len) };
    let (ok, answer) = match String::from_utf8(bytes) {
        Ok(text) => match crate::request::answer(&text) {
            Ok(answer) => (1, answer),
            Err(message) => (0, message),
        },
        Err(_) => (0, "the request is not UTF-8".to_string()),
    };
    ANSWER.with(|slot| *slot.borrow_mut() = answer);
    ok
}

/// Where the last answer's UTF-8 bytes start.
#[unsafe(no_mangle)]
pub extern "C" fn widgets_answer_ptr() -> *const u8 {
    ANSWER.with(|slot| slot.borrow().as_ptr())
}

/// How many bytes the last answer has.
#[unsafe(no_mangle)]
pub extern "C" fn widgets_answer_len() -> usize {
    ANSWER.with(|slot| slot.borrow().len())
}
