//! What a CEL expression of the configuration (a gate's `rule`, an assessment's) may be, and its
//! compilation. cel's parser and interpreter recurse: in a debug build compiling takes about
//! 150 KiB of stack per level of brackets, and evaluating about 40 KiB per level of the
//! expression's tree, where a runtime worker has 2 MiB. Too deep a rule would overflow the stack
//! and abort the whole process, so its text is measured before the parser sees it (its length,
//! how deep its brackets nest), its tree after (how deep it is), and the parser runs on a thread
//! of its own with a large stack. Evaluating it is bounded too: a macro that loops over a list
//! (`all`, `exists`, `exists_one`, `map`, `filter`) may not loop inside another's body, where
//! the cost would be the product of the lists' sizes — lists the agent's arguments choose — so
//! a rule costs at most its size times its input's (docs/config.md, "Limits of a rule").

use std::fmt;

use cel::common::ast::{EntryExpr, Expr, IdedEntryExpr, IdedExpr};

/// The longest expression, in characters.
pub const MAX_LENGTH: usize = 4_000;
/// How deep `(`, `[` and `{` may nest, outside string literals and comments.
pub const MAX_NESTING: usize = 12;
/// How deep the expression's tree may be: evaluating it recurses once per level.
pub const MAX_TREE_DEPTH: usize = 24;
/// How many loops (`all`, `exists`, `exists_one`, `map`, `filter`) may run one inside another's
/// body.
pub const MAX_LOOP_NESTING: usize = 1;
/// The compiler's thread's stack: room for cel's own limit of 96 levels of brackets (about
/// 15 MiB in a debug build), should the measure of the text ever miss some.
const COMPILER_STACK: usize = 32 * 1024 * 1024;

/// Why an expression was refused; said after "the rule" (or the expression) in an error.
#[derive(Debug, PartialEq)]
pub enum Refused {
    TooLong(usize),
    TooNested(usize),
    TooDeep(usize),
    LoopsInLoops(usize),
    Invalid(String),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLong(length) => write!(f, "is {length} characters long; a rule may have at most {MAX_LENGTH}"),
            Self::TooNested(depth) => {
                write!(f, "nests brackets ( [ {{ {depth} deep; a rule may nest them at most {MAX_NESTING} deep")
            }
            Self::TooDeep(depth) => write!(
                f,
                "is {depth} levels deep; a rule may be at most {MAX_TREE_DEPTH} (each operator, field, index or call applied to \
                 another's result adds a level, as in a long chain of + or ==; a chain of && or || adds only a few)"
            ),
            Self::LoopsInLoops(depth) => write!(
                f,
                "runs {depth} loops (all, exists, exists_one, map, filter) one inside another; a rule may run at most \
                 {MAX_LOOP_NESTING}: each inner loop runs once per item of the outer one, over lists the agent's arguments choose"
            ),
            Self::Invalid(error) => write!(f, "does not compile: {error}"),
        }
    }
}

/// Compiles `source` once its text is within the limits, and keeps it if its tree is too.
pub fn compile(source: &str) -> Result<cel::Program, Refused> {
    let length = source.chars().count();
    if length > MAX_LENGTH {
        return Err(Refused::TooLong(length));
    }
    let depth = nesting(source);
    if depth > MAX_NESTING {
        return Err(Refused::TooNested(depth));
    }
    on_large_stack(source)
}

/// Parses `source` and measures its tree on a thread of its own with [`COMPILER_STACK`]; a
/// program refused there is dropped there too (dropping a deep tree recurses as well).
fn on_large_stack(source: &str) -> Result<cel::Program, Refused> {
    std::thread::scope(|scope| -> Result<cel::Program, Refused> {
        let compiler = std::thread::Builder::new()
            .name("cel-compiler".into())
            .stack_size(COMPILER_STACK)
            .spawn_scoped(scope, || -> Result<cel::Program, Refused> {
                let program = cel::Program::compile(source).map_err(|e| Refused::Invalid(e.to_string()))?;
                let depth = tree_depth(program.expression());
                if depth > MAX_TREE_DEPTH {
                    return Err(Refused::TooDeep(depth));
                }
                let loops = loop_nesting(program.expression());
                if loops > MAX_LOOP_NESTING {
                    return Err(Refused::LoopsInLoops(loops));
                }
                Ok(program)
            })
            .map_err(|e| Refused::Invalid(format!("no thread to compile it on ({e})")))?;
        compiler.join().unwrap_or_else(|_| Err(Refused::Invalid("the CEL compiler failed on it".into())))
    })
}

/// How deep `(`, `[` and `{` nest in `source`, outside string literals and `//` comments.
pub fn nesting(source: &str) -> usize {
    // Every character that matters here is ASCII, and no byte of a longer UTF-8 character is.
    let bytes = source.as_bytes();
    let (mut at, mut depth, mut deepest) = (0, 0usize, 0usize);
    while at < bytes.len() {
        at = match bytes[at] {
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                at + 1
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                at + 1
            }
            b'\'' | b'"' => after_string(bytes, at, false),
            b'/' if bytes.get(at + 1) == Some(&b'/') => after_line(bytes, at),
            b if b.is_ascii_alphanumeric() || b == b'_' => after_word(bytes, at),
            _ => at + 1,
        };
    }
    deepest
}

/// Where the word (a name, a keyword or a number) at `start` ends; a string's prefix (`r`, `b`,
/// `br`: raw, bytes, raw bytes) ends with its string.
fn after_word(bytes: &[u8], start: usize) -> usize {
    let end = start + bytes[start..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
    let prefix = bytes[start..end].to_ascii_lowercase();
    match (prefix.as_slice(), bytes.get(end)) {
        (b"r" | b"br", Some(b'\'' | b'"')) => after_string(bytes, end, true),
        (b"b", Some(b'\'' | b'"')) => after_string(bytes, end, false),
        _ => end,
    }
}

/// Where the string literal whose quote is at `start` ends, just after its closing quote:
/// `'…'`, `"…"` or the same tripled, with backslash escapes unless `raw`. An unclosed one (which
/// the parser refuses anyway) ends at its quote, so that what follows is measured as code.
fn after_string(bytes: &[u8], start: usize, raw: bool) -> usize {
    let quote = bytes[start];
    let triple = bytes[start..].starts_with(&[quote; 3]);
    let width = if triple { 3 } else { 1 };
    let mut at = start + width;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' if !raw => at += 2,
            b if b == quote && (!triple || bytes[at..].starts_with(&[quote; 3])) => return at + width,
            b'\n' | b'\r' if !triple => break,
            _ => at += 1,
        }
    }
    start + 1
}

/// Where the `//` comment at `start` ends: at its line's end.
fn after_line(bytes: &[u8], start: usize) -> usize {
    bytes[start..].iter().position(|b| *b == b'\n').map_or(bytes.len(), |n| start + n)
}

/// How deep the expression's tree is (a literal or a name alone: 1), walked without recursion.
fn tree_depth(root: &IdedExpr) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(root, 1)];
    while let Some((expr, depth)) = todo.pop() {
        deepest = deepest.max(depth);
        todo.extend(children(expr).into_iter().map(|child| (child, depth + 1)));
    }
    deepest
}

/// How many loops run one inside another's body at the deepest: a macro's range, start and
/// result are evaluated once, its condition and step once per item.
fn loop_nesting(root: &IdedExpr) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(root, 0)];
    while let Some((expr, loops)) = todo.pop() {
        match &expr.expr {
            Expr::Comprehension(c) => {
                let inside = loops + 1;
                deepest = deepest.max(inside);
                todo.extend([(&c.iter_range, loops), (&c.accu_init, loops), (&c.result, loops)]);
                todo.extend([(&c.loop_cond, inside), (&c.loop_step, inside)]);
            }
            _ => todo.extend(children(expr).into_iter().map(|child| (child, loops))),
        }
    }
    deepest
}

/// The expressions right under `expr`.
fn children(expr: &IdedExpr) -> Vec<&IdedExpr> {
    match &expr.expr {
        Expr::Call(call) => call.target.as_deref().into_iter().chain(&call.args).collect(),
        Expr::Comprehension(c) => vec![&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => map.entries.iter().flat_map(entry_parts).collect(),
        Expr::Struct(object) => object.entries.iter().flat_map(entry_parts).collect(),
        Expr::Select(select) => vec![&*select.operand],
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => Vec::new(),
    }
}

fn entry_parts(entry: &IdedEntryExpr) -> Vec<&IdedExpr> {
    match &entry.expr {
        EntryExpr::StructField(field) => vec![&field.value],
        EntryExpr::MapEntry(pair) => vec![&pair.key, &pair.value],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_in_strings_and_comments_do_not_nest() {
        assert_eq!(nesting("tool == 'x'"), 0);
        assert_eq!(nesting("((a)) && [{1: (2)}]"), 3);
        assert_eq!(nesting("f(g(h(x)))"), 3);
        for text in [
            "'((((' == user",
            "\"[[[[\" == user",
            "'it\\'s ((((' == user",
            "\"\\\"((((\" == user",
            "r'\\((((' == user",
            "'''a ' (((( '' '''",
            "\"\"\"((((\n((((\"\"\"",
            "b'((((' == br\"{{{{\"",
            "user == 'x' // ((((",
        ] {
            assert_eq!(nesting(text), 0, "{text}");
        }
        // A raw string ends at its first quote: what follows is code again.
        assert_eq!(nesting("r'\\'(('"), 2);
        // `bar` is a name, not a string's prefix: its string keeps its escapes.
        assert_eq!(nesting("bar'\\'(('"), 0);
        // An unclosed string ends at its quote (the parser refuses it anyway).
        assert_eq!(nesting("'(((("), 4);
        assert_eq!(nesting("'((\n(("), 4);
    }

    #[test]
    fn a_chain_of_operators_is_as_deep_as_it_is_long_but_and_and_or_chains_are_balanced() {
        let depth = |source: &str| tree_depth(cel::Program::compile(source).unwrap().expression());
        assert_eq!(depth("tool"), 1);
        assert_eq!(depth("tool == 'process_refund' && args.amount > 100"), 4);
        assert_eq!(depth(&format!("1{} > 0", " + 1".repeat(10))), 12);
        let alternatives = vec!["tool == 'x'"; 128].join(" || ");
        assert_eq!(depth(&alternatives), 9, "128 terms: 7 levels of || over each term's 2");
        assert_eq!(depth("args.items.exists(i, i.price > 10)"), 5, "a macro counts as it expands: a comprehension over ||");
    }

    /// What docs/config.md says of numbers in the arguments.
    #[test]
    fn whole_numbers_in_the_arguments_are_unsigned_and_int_converts_them() {
        let eval = |rule: &str| {
            let mut context = cel::Context::with_env(std::sync::Arc::new(cel::Env::stdlib()));
            context.add_variable_from_value("args", cel::to_value(serde_json::json!({ "order_id": 1004 })).unwrap());
            compile(rule).unwrap().execute(&context)
        };
        assert_eq!(eval("args.order_id > 1000").unwrap(), cel::Value::Bool(true));
        assert!(eval("args.order_id + 1 == 1005").is_err());
        assert_eq!(eval("int(args.order_id) + 1 == 1005").unwrap(), cel::Value::Bool(true));
    }

    #[test]
    fn a_loop_may_not_run_inside_another_loops_body() {
        let loops = |rule: &str| loop_nesting(cel::Program::compile(rule).unwrap().expression());
        assert_eq!(loops("args.amount > 100"), 0);
        assert_eq!(loops("args.items.all(i, i.price < 100)"), 1);
        // One after another, or one over the other's result: each runs once.
        assert_eq!(loops("args.items.all(i, i > 0) && args.tags.exists(t, t == 'vip')"), 1);
        assert_eq!(loops("args.items.map(i, i * 2).all(i, i < 100)"), 1);
        assert_eq!(loops("args.items.all(a, args.items.all(b, a != b))"), 2);
        assert_eq!(loops("[1, 2].all(a, [1, 2].map(b, [1].filter(c, c == a + b)).size() > 0)"), 3);
        let nested = compile("tool == 'get_order' && args.items.all(a, args.items.exists(b, a == b))");
        assert_eq!(nested.err(), Some(Refused::LoopsInLoops(2)));
        assert!(compile("args.items.all(i, i.price < 100) && args.tags.exists(t, t == 'vip')").is_ok());
    }

    #[test]
    fn the_limits_are_said_as_they_are_hit() {
        assert!(compile(&format!("{}tool == 'x'{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING))).is_ok());
        let deep = format!("{}tool == 'x'{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(compile(&deep).err(), Some(Refused::TooNested(100)));
        let long = format!("tool == '{}'", "x".repeat(MAX_LENGTH));
        assert_eq!(compile(&long).err(), Some(Refused::TooLong(MAX_LENGTH + 10)));
        let chain = format!("1{} > 0", " + 1".repeat(MAX_TREE_DEPTH));
        assert_eq!(compile(&chain).err(), Some(Refused::TooDeep(MAX_TREE_DEPTH + 2)));
        assert!(matches!(compile("args.amount >"), Err(Refused::Invalid(_))));
    }
}
