//! The memory budget of a render: a bound on the bytes that templates build.
//!
//! Go's text/template bounds nothing. `{{ repeat 100000000000 "x" }}` asks for 100 GB at
//! once, and Helm only stops because Go's runtime refuses an allocation larger than the
//! machine (a fatal error, not a template error); `until`, a list doubled in a loop or a
//! long `range` writing output grow until the kernel kills the process. A render here
//! has a limit (1 GiB unless the caller sets one) on what it builds, and going over it
//! is a template error at the call or action that did it. Accounting happens at function
//! boundaries and output writes, never per byte:
//!
//! - **Output.** Every write to a template's output counts in full: text, printed
//!   values, and the output of `include` and `tpl` as it is written.
//! - **Function results** count by how much they are larger than their largest argument
//!   ([`shallow_size`]: string and byte lengths, list slots, map entries). Rebuilding a
//!   value in a loop (`$l = append $l $x`, `$s = print $s "x"`, `set` on a growing map)
//!   then counts what each step adds, not every copy: Go's collector frees the copies,
//!   and counting them would fail a loop of ten thousand appends that Helm renders in a
//!   blink. The cost of that choice is that many slightly different copies of a large
//!   value, all kept, are undercounted.
//! - **Functions that can multiply their input** (`repeat`, `indent`, `until`, the
//!   `rand*` family, `join`, `replace`, `printf` widths, `toYaml` of a value whose parts
//!   are shared, ...) check before they allocate, so they fail at once instead of after
//!   building something huge.
//! - **Nested templates** (`template`, `include`, `tpl`) hold [`NESTING_BYTES`] each while
//!   they run, for their stack, so runaway recursion ends in this error too.
//!
//! The counters live in thread-locals, so that functions deep in the library (`printf`'s
//! formatter, the JSON writer) can ask how much room is left without every signature
//! carrying it. A render runs on one thread; [`Scope`] installs its budget there.

use std::cell::Cell;

use crate::value::{ListKind, Value};

/// The limit when the caller sets none. Of the 105 cases of the shared corpus of real
/// charts, the render that counts most peaks at 3.5 MiB (kyverno, whose output is most
/// of it; kube-prometheus-stack peaks at 0.6 MiB), so this leaves a margin of some three
/// hundred times while keeping a runaway template far from most machines' memory.
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;

/// A nominal amount a running nested template holds for its stack and state: enough
/// that recursion without end meets the budget, small enough that Go's own limit of
/// 100 000 nested `{{template}}` calls still comes first at the default limit.
pub(crate) const NESTING_BYTES: u64 = 4 << 10;

/// Go's `maxAlloc` on 64-bit Linux: `make` of a larger slice panics with
/// [`MAKESLICE_LEN`], which text/template reports as the calling function's error.
/// Smaller requests that the machine cannot hold are a fatal runtime error in Go.
pub(crate) const GO_MAX_ALLOC: u64 = 1 << 48;
pub(crate) const MAKESLICE_LEN: &str = "runtime error: makeslice: len out of range";

/// The words every budget error starts with, which callers look for to tell this error
/// from others ([`crate::Error::is_memory_limit`]).
pub const MEMORY_LIMIT_EXCEEDED: &str = "rendering memory limit";

/// A map entry: its key and value slots and a share of the tree's nodes.
const MAP_ENTRY_BYTES: u64 = 48;

/// A render's limit and what it has used so far, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    pub limit: u64,
    pub used: u64,
}

impl MemoryBudget {
    pub fn new(limit: u64) -> Self {
        MemoryBudget { limit, used: 0 }
    }
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::new(DEFAULT_MEMORY_LIMIT)
    }
}

thread_local! {
    static LIMIT: Cell<u64> = const { Cell::new(u64::MAX) };
    static USED: Cell<u64> = const { Cell::new(0) };
}

/// Makes a budget the current thread's while it lives, and writes back what was used
/// when it ends. The budget it replaced (none, outside a render) comes back then.
pub(crate) struct Scope<'b> {
    budget: &'b mut MemoryBudget,
    saved: (u64, u64),
}

impl<'b> Scope<'b> {
    pub(crate) fn enter(budget: &'b mut MemoryBudget) -> Self {
        let saved = (LIMIT.get(), USED.get());
        LIMIT.set(budget.limit);
        USED.set(budget.used);
        Scope { budget, saved }
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        self.budget.used = USED.get();
        LIMIT.set(self.saved.0);
        USED.set(self.saved.1);
    }
}

/// Bytes the current render may still build.
pub(crate) fn room() -> u64 {
    LIMIT.get().saturating_sub(USED.get())
}

/// Checks that `bytes` more fit, without counting them (the result is counted when the
/// function returns it).
pub(crate) fn reserve(bytes: u64) -> Result<(), String> {
    if bytes > room() {
        return Err(exceeded_by("the result", bytes));
    }
    Ok(())
}

/// Counts `bytes` as built, or fails (counting nothing) when they do not fit.
pub(crate) fn charge(bytes: u64, what: &str) -> Result<(), String> {
    if bytes > room() {
        return Err(exceeded_by(what, bytes));
    }
    USED.set(USED.get() + bytes);
    Ok(())
}

/// Gives back bytes that were held only for a while (a nested template's stack).
pub(crate) fn release(bytes: u64) {
    USED.set(USED.get().saturating_sub(bytes));
}

/// Checks an allocation of `bytes` (`None`: its size overflowed) as Go's `make` would,
/// then against the budget.
pub(crate) fn go_make(bytes: Option<u64>) -> Result<(), String> {
    go_make_len(bytes)?;
    reserve(bytes.unwrap_or(u64::MAX))
}

/// Only Go's check of [`go_make`], for a Go allocation that differs from ours.
pub(crate) fn go_make_len(bytes: Option<u64>) -> Result<(), String> {
    match bytes {
        Some(b) if b <= GO_MAX_ALLOC => Ok(()),
        _ => Err(MAKESLICE_LEN.into()),
    }
}

/// Follows a result that is built piece by piece when its size is not known up front
/// (regular expression replacements, splits): fails once it passes the room that was
/// left when it started.
pub(crate) struct Meter {
    room: u64,
}

impl Meter {
    pub(crate) fn new() -> Self {
        Meter { room: room() }
    }

    /// The room as a length, for builders that only compare lengths.
    pub(crate) fn room(&self) -> usize {
        usize::try_from(self.room).unwrap_or(usize::MAX)
    }

    /// Fails when a result has reached `bytes` and that is more than the room.
    pub(crate) fn check(&self, bytes: u64) -> Result<(), String> {
        if bytes > self.room {
            return Err(self.exceeded());
        }
        Ok(())
    }

    /// The error for a result that grew past the room.
    pub(crate) fn exceeded(&self) -> String {
        format!(
            "{MEMORY_LIMIT_EXCEEDED} of {} exceeded: the result grew past the {} that was left",
            human(LIMIT.get()),
            human(self.room),
        )
    }
}

/// What decoding YAML, JSON or TOML may take for each byte of its text, at most: a
/// one-letter item of a YAML list (`- a` and a newline) becomes a parsed node, a value
/// slot and a shared string, some twenty times its four bytes.
const DECODED_BYTES_PER_TEXT_BYTE: u64 = 24;

/// Checks that what `text` decodes to can fit, before it is decoded: the result is
/// counted by its top level only, and a long text of tiny items would otherwise
/// build gigabytes from a few hundred megabytes.
pub(crate) fn reserve_decoded(text: &str) -> Result<(), String> {
    reserve_decoded_bytes(text.len())
}

/// [`reserve_decoded`] for a text of `len` bytes.
pub(crate) fn reserve_decoded_bytes(len: usize) -> Result<(), String> {
    reserve((len as u64).saturating_mul(DECODED_BYTES_PER_TEXT_BYTE))
}

/// The error for `what` needing `bytes` more than the room left.
pub(crate) fn exceeded_by(what: &str, bytes: u64) -> String {
    format!(
        "{MEMORY_LIMIT_EXCEEDED} of {} exceeded: {what} would take {} more, with {} already used",
        human(LIMIT.get()),
        human(bytes),
        human(USED.get()),
    )
}

/// The error when a value's printed or serialised form would not fit.
pub(crate) fn too_large_to_write() -> String {
    format!(
        "{MEMORY_LIMIT_EXCEEDED} of {} exceeded: writing the value out would take more than the {} left",
        human(LIMIT.get()),
        human(room()),
    )
}

/// Bytes in binary units, as people read them: `512 B`, `64 KiB`, `1.5 GiB`.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut unit = 0;
    let mut value = bytes as f64;
    // Move up while the value would print as 1024 or more (1023.96 prints as 1024.0).
    while (value * 10.0).round() >= 10240.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let tenths = (value * 10.0).round() / 10.0;
    if unit == 0 || tenths.fract() == 0.0 {
        format!("{tenths} {}", UNITS[unit])
    } else {
        format!("{tenths:.1} {}", UNITS[unit])
    }
}

/// The bytes a value occupies itself, not counting what its elements share with other
/// values: string and byte lengths, list slots, map entries. O(1).
pub(crate) fn shallow_size(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.len() as u64,
        Value::RawStr(b) | Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.heap_bytes(),
        Value::Map(m) => m.len() as u64 * MAP_ENTRY_BYTES,
        _ => 0,
    }
}

/// What a list of `len` elements of this kind takes (see [`crate::List::heap_bytes`]).
pub(crate) fn list_bytes(kind: ListKind, len: u64) -> u64 {
    let slot = match kind {
        ListKind::Int => std::mem::size_of::<i64>(),
        _ => std::mem::size_of::<Value>(),
    };
    len.saturating_mul(slot as u64)
}

/// Counts a function's result by what it adds to its largest argument.
pub(crate) fn charge_result(result: &Value, args: &[Value]) -> Result<(), String> {
    let size = shallow_size(result);
    if size == 0 {
        return Ok(());
    }
    let largest = args.iter().map(shallow_size).max().unwrap_or(0);
    match size.checked_sub(largest) {
        Some(growth) if growth > 0 => charge(growth, "the result"),
        _ => Ok(()),
    }
}

/// Fails when writing `v` out (printing, JSON, YAML, a deep copy) would take more than
/// the room left. A value's parts can be shared (`$l = list $l $l` doubles what printing
/// writes while adding two slots), so its text can be far larger than what building it
/// counted; this walks it, stopping as soon as the estimate passes the room.
pub(crate) fn check_expansion(v: &Value) -> Result<(), String> {
    if !matches!(v, Value::List(_) | Value::Map(_) | Value::Object(_)) {
        return Ok(());
    }
    match expanded_size(v, room()) {
        Some(_) => Ok(()),
        None => Err(too_large_to_write()),
    }
}

/// Fails when printing all of `args` (as `print`, `quote` or `toString` do) would take
/// more than the room left: strings by their length, lists and maps by what they expand
/// to. Arguments can repeat one large value, and lists can share parts.
pub(crate) fn check_args(args: &[Value]) -> Result<(), String> {
    let room = room();
    let mut total: u64 = 0;
    for arg in args {
        total = total.saturating_add(match arg {
            Value::String(s) => s.len() as u64,
            // Quoted, each byte that is not UTF-8 takes four.
            Value::RawStr(b) | Value::Bytes(b) => b.len() as u64 * 4,
            Value::List(_) | Value::Map(_) | Value::Object(_) => {
                match expanded_size(arg, room.saturating_sub(total)) {
                    Some(n) => n,
                    None => return Err(too_large_to_write()),
                }
            }
            _ => 0,
        });
        if total > room {
            return Err(too_large_to_write());
        }
    }
    Ok(())
}

/// Deeper than this, a value is taken to be too large to write: only a map that holds
/// itself (`set $d "self" $d`) nests so deep, and it expands without end.
const MAX_DEPTH: usize = 10_000;

/// An estimate of the text `v` writes out (an indented serialisation of it), or `None`
/// if it is more than `cap`. Iterative, so that deep values cannot overflow the stack.
pub(crate) fn expanded_size(v: &Value, cap: u64) -> Option<u64> {
    // Each element costs its own text plus separators and, in the indented formats, its
    // indentation; numbers and objects are given a typical width.
    const PER_ELEMENT: u64 = 4;
    const SCALAR: u64 = 8;
    let mut total: u64 = 0;
    // Only lists and maps wait here; other elements are counted where they are met, so
    // a long flat list takes no memory to measure.
    let mut pending: Vec<(Value, u64)> = Vec::new();
    fn visit(value: &Value, depth: u64, total: &mut u64, pending: &mut Vec<(Value, u64)>) {
        *total += PER_ELEMENT + 2 * depth;
        match value {
            Value::String(s) => *total += s.len() as u64,
            Value::RawStr(b) => *total += b.len() as u64 * 4,
            Value::Bytes(b) => *total += b.len() as u64 * 4 / 3,
            Value::List(_) | Value::Map(_) => pending.push((value.clone(), depth)),
            Value::Object(o) => match o.underlying() {
                Some(inner) => pending.push((inner, depth)),
                None => *total += SCALAR,
            },
            _ => *total += SCALAR,
        }
    }
    visit(v, 0, &mut total, &mut pending);
    while let Some((value, depth)) = pending.pop() {
        if depth as usize > MAX_DEPTH {
            return None;
        }
        match &value {
            Value::List(l) => {
                for item in l.iter() {
                    visit(&item, depth + 1, &mut total, &mut pending);
                    if total > cap {
                        return None;
                    }
                }
            }
            Value::Map(m) => {
                for (k, item) in m.borrow().iter() {
                    total += k.len() as u64;
                    visit(item, depth + 1, &mut total, &mut pending);
                    if total > cap {
                        return None;
                    }
                }
            }
            _ => {}
        }
        if total > cap {
            return None;
        }
    }
    (total <= cap).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_budget<T>(limit: u64, body: impl FnOnce() -> T) -> (T, u64) {
        let mut budget = MemoryBudget::new(limit);
        let result = {
            let _scope = Scope::enter(&mut budget);
            body()
        };
        (result, budget.used)
    }

    #[test]
    fn charges_count_until_the_limit_and_fail_beyond_it() {
        let (results, used) = with_budget(100, || {
            [
                charge(60, "a"),
                charge(50, "b"),
                charge(40, "c"),
                reserve(1),
            ]
        });
        assert!(results[0].is_ok() && results[2].is_ok() && results[3].is_err());
        let message = results[1].as_ref().unwrap_err();
        assert_eq!(
            message,
            "rendering memory limit of 100 B exceeded: b would take 50 B more, with 60 B already used"
        );
        assert_eq!(used, 100);
    }

    #[test]
    fn a_scope_restores_the_budget_it_replaced() {
        let (inner_used, outer_used) = with_budget(1000, || {
            charge(10, "x").unwrap();
            let (_, inner) = with_budget(50, || charge(20, "y").unwrap());
            // Back in the outer budget: its own count, its own limit.
            charge(900, "z").unwrap();
            inner
        });
        assert_eq!((inner_used, outer_used), (20, 910));
        assert_eq!(room(), u64::MAX, "outside a render nothing is limited");
    }

    #[test]
    fn results_count_what_they_add_to_their_largest_argument() {
        let (_, used) = with_budget(1 << 20, || {
            let s = Value::str("abcdef");
            // print $s "x": one byte more than its largest argument.
            charge_result(&Value::str("abcdefx"), &[s.clone(), Value::str("x")]).unwrap();
            // trunc 3 $s: smaller than its argument, nothing added.
            charge_result(&Value::str("abc"), &[Value::Int(3), s]).unwrap();
            // until 4: four list slots from an integer.
            let list = Value::list((0..4).map(Value::Int).collect());
            charge_result(&list, &[Value::Int(4)]).unwrap();
        });
        assert_eq!(used, 1 + 4 * std::mem::size_of::<Value>() as u64);
    }

    #[test]
    fn go_make_fails_like_go_beyond_its_maximum_allocation() {
        let (results, _) = with_budget(u64::MAX, || {
            [
                go_make(Some(GO_MAX_ALLOC + 1)),
                go_make(None),
                go_make(Some(10)),
            ]
        });
        assert_eq!(results[0], Err(MAKESLICE_LEN.to_owned()));
        assert_eq!(results[1], Err(MAKESLICE_LEN.to_owned()));
        assert!(results[2].is_ok());
    }

    #[test]
    fn shared_parts_count_each_time_they_are_written() {
        let mut l = Value::list(vec![Value::str("0123456789")]);
        for _ in 0..40 {
            l = Value::list(vec![l.clone(), l]);
        }
        // 2^40 copies of ten bytes: far beyond any cap, found without walking them all.
        assert_eq!(expanded_size(&l, 1 << 20), None);
        let small = Value::list(vec![Value::str("ab"), Value::Int(1)]);
        assert!(expanded_size(&small, 1 << 20).is_some_and(|n| n < 64));
    }

    #[test]
    fn a_map_that_holds_itself_is_too_large_to_write() {
        let d = Value::empty_map();
        if let Value::Map(m) = &d {
            m.borrow_mut().insert("self".into(), d.clone());
        }
        assert_eq!(expanded_size(&d, u64::MAX), None);
        // Break the cycle so the test does not leak it.
        if let Value::Map(m) = &d {
            m.borrow_mut().clear();
        }
    }

    /// Renders `text` as `c/templates/t.yaml` with a memory limit of `limit` bytes.
    fn render(text: &str, limit: u64) -> Result<String, crate::Error> {
        let mut set = crate::TemplateSet::new();
        set.add("c/templates/t.yaml", text).unwrap();
        set.set_memory_limit(limit);
        set.render("c/templates/t.yaml", Value::Nil)
    }

    fn limit_error(text: &str, limit: u64) -> String {
        let error = render(text, limit).unwrap_err();
        assert!(error.is_memory_limit(), "{error}");
        error.to_string()
    }

    #[test]
    fn repeat_with_a_huge_count_fails_before_allocating() {
        let started = std::time::Instant::now();
        let error = limit_error(
            "a: 1\nb: {{ repeat 100000000000 \"x\" }}",
            DEFAULT_MEMORY_LIMIT,
        );
        assert!(
            error.starts_with(
                "template: c/templates/t.yaml:2:6: executing \"c/templates/t.yaml\" at <repeat 100000000000 \"x\">: error calling repeat: rendering memory limit of 1 GiB exceeded: the result would take 93.1 GiB more"
            ),
            "{error}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn functions_whose_size_follows_from_an_argument_check_it_first() {
        for call in [
            "indent 100000000 \"a\\nb\"",
            "nindent 100000000 \"a\"",
            "randAlphaNum 100000000",
            "randBytes 100000000",
            "until 100000000",
            "untilStep 0 1000000000 2",
            "seq 100000000",
            "join (repeat 1000000 \"x\") (list 1 2 3 4 5 6 7 8 9 10 11)",
            "replace \"a\" (repeat 10000 \"b\") (repeat 1000 \"a\")",
            "wrapWith 1 (repeat 10000 \"-\") (repeat 1000 \"a\")",
            "splitList \"\" (repeat 1000000 \"a\")",
            "regexReplaceAll \"a\" (repeat 1000 \"a\") (repeat 10000 \"b\")",
            "printf (repeat 100 \"%[1]*[2]d\") 100000 1",
            "fromYamlArray (repeat 100000 \"- a\\n\")",
        ] {
            let error = limit_error(&format!("x: {{{{ {call} }}}}"), 8 << 20);
            let name = call.split(' ').next().unwrap();
            assert!(
                error.contains(&format!(
                    "error calling {name}: rendering memory limit of 8 MiB exceeded"
                )),
                "{error}"
            );
        }
    }

    #[test]
    fn output_past_the_limit_names_the_text_being_written() {
        let error = render(
            "a\n{{ range 1000 }}0123456789abcdefghijklmnopqrstuvwxyz{{ end }}",
            20_000,
        )
        .unwrap_err();
        assert!(error.is_memory_limit());
        assert!(
            error.helm_message().starts_with(
                "c/templates/t.yaml:2:16\n  executing \"c/templates/t.yaml\" at <\"0123456789abcdefghijklmn\"...>:\n    rendering memory limit of 19.5 KiB exceeded: the output would take 36 B more"
            ),
            "{}",
            error.helm_message()
        );
    }

    #[test]
    fn rebuilding_a_value_in_a_loop_counts_what_each_step_adds() {
        // 5000 appends copy 12.5 million list slots in all, but the list only ever
        // grows by one; counting every copy would need 300 MB.
        let text =
            "{{ $l := list }}{{ range until 5000 }}{{ $l = append $l . }}{{ end }}{{ len $l }}";
        assert_eq!(render(text, 1 << 20).unwrap(), "5000");
        // Doubling is counted in full and stops at the limit.
        let doubling = "{{ $l := list 1 }}{{ range until 40 }}{{ $l = concat $l $l }}{{ end }}";
        let error = limit_error(doubling, 1 << 20);
        assert!(error.contains("error calling concat"), "{error}");
    }

    #[test]
    fn writing_out_a_value_with_shared_parts_is_checked_first() {
        // 2^30 references to one string in 30 doublings of a list.
        let shared =
            "{{ $l := list \"0123456789\" }}{{ range until 30 }}{{ $l = list $l $l }}{{ end }}";
        for write in [
            "{{ toYaml $l }}",
            "{{ toJson $l }}",
            "{{ $l }}",
            "{{ deepCopy $l }}",
            "{{ print $l }}",
        ] {
            let error = limit_error(&format!("{shared}{write}"), 8 << 20);
            assert!(
                error.contains("writing the value out would take more than"),
                "{write}: {error}"
            );
        }
    }

    #[test]
    fn runaway_recursion_through_include_and_tpl_stops() {
        // Each level doubles the output of the one below: 2^40 bytes at the top.
        let doubling = "{{ define \"d\" }}{{ if lt . 40 }}{{ $s := include \"d\" (add1 .) }}{{ $s }}{{ $s }}{{ else }}x{{ end }}{{ end }}{{ include \"d\" 0 }}";
        limit_error(doubling, 8 << 20);
        // Helm has no limit on tpl nesting; Go's stack overflows in the end.
        let error = render(
            "{{ tpl \"{{ tpl . . }}\" \"{{ tpl . . }}\" }}",
            DEFAULT_MEMORY_LIMIT,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.ends_with(
                "error calling tpl: include and tpl calls are nested more than 2000 deep"
            ),
            "{}",
            &error[error.len().saturating_sub(200)..]
        );
    }

    #[test]
    fn gos_template_depth_limit_comes_before_the_default_budget() {
        let error = render(
            "{{ define \"t\" }}{{ template \"t\" }}{{ end }}{{ template \"t\" }}",
            DEFAULT_MEMORY_LIMIT,
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("exceeded maximum template depth (100000)"),
            "{error}"
        );
    }

    #[test]
    fn a_shared_budget_counts_the_outputs_already_kept() {
        let mut set = crate::TemplateSet::new();
        set.add("c/templates/t.yaml", "{{ repeat 600 \"x\" }}")
            .unwrap();
        let mut budget = MemoryBudget::new(64 << 10);
        set.render_within("c/templates/t.yaml", Value::Nil, &mut budget)
            .unwrap();
        // The result (all but the one byte of its argument), then the output.
        assert_eq!(budget.used, 599 + 600);
        budget.used = 64 << 10;
        let error = set
            .render_within("c/templates/t.yaml", Value::Nil, &mut budget)
            .unwrap_err();
        assert!(error.is_memory_limit(), "{error}");
    }

    #[test]
    fn sizes_read_as_binary_units() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(1 << 30), "1 GiB");
        assert_eq!(human(100_000_000_000), "93.1 GiB");
        assert_eq!(human((1 << 30) - 40), "1 GiB", "not 1024.0 MiB");
        assert_eq!(human(4096 + 3), "4 KiB");
    }
}
