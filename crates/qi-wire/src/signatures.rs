//! A module's method signatures in libqi's type letters.
//!
//! A module tells the broker its methods with a readable signature: in-process and Rust
//! modules `(String, Option<i64>) -> Vec<f64>`, Python ones what `inspect.signature` prints,
//! `(key, value=None)`. A qi client needs one parameter signature per overload, so each
//! readable signature becomes one or more: a trailing `Option<T>` or a parameter with a
//! default gives an overload with and one without it, `*args` one per count of arguments.
//! Parameters keep precise letters only where any caller's value converts (strings, bools,
//! numbers and lists of them); everything else is dynamic (`m`), as NAOqi's ALValue
//! parameters are. A return type is precise wherever the Rust type fixes the value's shape.

/// Most arguments a method whose signature does not say how many is offered for.
pub(crate) const MAX_ARITY: usize = 8;

/// One way to call a method over qi: its parameter tuple and return type, as signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Overload {
    pub(crate) params: String,
    pub(crate) returns: String,
}

enum Param {
    Required(String),
    Optional(String),
    /// `*args`: any number more.
    Variadic,
}

/// How a service a qi client hosts describes its method to the broker: `qi (mm) -> m`, the
/// method's own libqi signatures.
pub(crate) fn qi_signature(params: &str, returns: &str) -> String {
    format!("{QI_PREFIX}{params} -> {returns}")
}

const QI_PREFIX: &str = "qi ";

/// The overloads of a method whose readable signature is `signature`.
pub(crate) fn overloads(signature: &str) -> Vec<Overload> {
    if let Some((params, returns)) = signature.strip_prefix(QI_PREFIX).and_then(|qi| qi.split_once(" -> ")) {
        return vec![Overload { params: params.to_owned(), returns: returns.to_owned() }];
    }
    let Some((params, returns)) = split(signature) else {
        return (0..=MAX_ARITY).map(|arity| dynamic_overload(arity, "m")).collect();
    };
    let returns = returns.map_or_else(|| "m".to_owned(), return_letters);
    let params: Vec<Param> = params.iter().filter_map(|text| param(text)).collect();
    // Only a trailing run of optional parameters may be left out.
    let required = params.iter().rposition(|p| !matches!(p, Param::Optional(_))).map_or(0, |last| last + 1);
    let mut fixed: Vec<String> = Vec::new();
    for param in &params[..required] {
        match param {
            Param::Required(letters) => fixed.push(letters.clone()),
            Param::Optional(_) => fixed.push("m".to_owned()),
            Param::Variadic => {
                let arities = fixed.len()..=MAX_ARITY.max(fixed.len());
                return arities.map(|arity| padded(&fixed, arity, &returns)).collect();
            }
        }
    }
    let mut result = vec![tuple(&fixed, &returns)];
    for param in &params[required..] {
        if let Param::Optional(letters) = param {
            fixed.push(letters.clone());
            result.push(tuple(&fixed, &returns));
        }
    }
    result
}

fn tuple(params: &[String], returns: &str) -> Overload {
    Overload { params: format!("({})", params.concat()), returns: returns.to_owned() }
}

fn padded(fixed: &[String], arity: usize, returns: &str) -> Overload {
    let mut params = fixed.to_vec();
    params.resize(arity, "m".to_owned());
    tuple(&params, returns)
}

fn dynamic_overload(arity: usize, returns: &str) -> Overload {
    Overload { params: format!("({})", "m".repeat(arity)), returns: returns.to_owned() }
}

/// `(a, b) -> R` into its parameter texts and return text; `None` when it has no such shape.
fn split(signature: &str) -> Option<(Vec<&str>, Option<&str>)> {
    let text = signature.trim().strip_prefix('(')?;
    let close = closing(text)?;
    let params = split_top_level(&text[..close]);
    let rest = text[close + 1..].trim();
    let returns = match rest.strip_prefix("->") {
        Some(returns) => Some(returns.trim()),
        None if rest.is_empty() => None,
        None => return None,
    };
    Some((params, returns))
}

/// Where the bracket that closes the one just before `text` is.
fn closing(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' if depth > 0 => depth -= 1,
            ')' => return Some(at),
            _ => {}
        }
    }
    None
}

/// Comma-separated parts at the top level of brackets, blank ones left out.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().map(str::trim).filter(|part| !part.is_empty()).collect()
}

/// One parameter: a Rust type, or Python's `name`, `name=default`, `*args`. Python's `**kwargs`,
/// `/` and a bare `*` take no positional argument.
fn param(text: &str) -> Option<Param> {
    if text.starts_with("**") || text == "/" || text == "*" || text == "self" {
        return None;
    }
    if text.starts_with('*') {
        return Some(Param::Variadic);
    }
    if let Some(inner) = generic_argument(text, "Option") {
        return Some(Param::Optional(param_letters(inner)));
    }
    if text.contains('=') {
        return Some(Param::Optional("m".to_owned()));
    }
    Some(Param::Required(param_letters(text)))
}

/// `T` of `Name<T>`.
fn generic_argument<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.strip_prefix(name)?.strip_prefix('<')?.strip_suffix('>').map(str::trim)
}

/// A parameter's letters: precise for what any caller's value converts to, else `m`.
fn param_letters(text: &str) -> String {
    if let Some(letter) = scalar(text) {
        return letter.to_owned();
    }
    match generic_argument(text, "Vec").and_then(scalar) {
        Some(letter) => format!("[{letter}]"),
        None => "m".to_owned(),
    }
}

/// A return type's letters: precise wherever the Rust type fixes the value's shape.
fn return_letters(text: &str) -> String {
    let text = text.trim();
    if text == "()" {
        return "v".to_owned();
    }
    if let Some(letter) = scalar(text) {
        return letter.to_owned();
    }
    if let Some(inner) = generic_argument(text, "Vec") {
        return format!("[{}]", return_letters(inner));
    }
    if let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        let members: Vec<String> = split_top_level(inner).into_iter().map(return_letters).collect();
        if !members.is_empty() && members.iter().all(|m| m != "v") {
            return format!("({})", members.concat());
        }
    }
    "m".to_owned()
}

fn scalar(text: &str) -> Option<&'static str> {
    Some(match text.trim() {
        "String" | "&str" | "str" => "s",
        "bool" => "b",
        "i8" => "c",
        "u8" => "C",
        "i16" => "w",
        "u16" => "W",
        "i32" => "i",
        "u32" => "I",
        "i64" => "l",
        "u64" => "L",
        "f32" => "f",
        "f64" => "d",
        "Value" => "m",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(signature: &str) -> Vec<(String, String)> {
        overloads(signature).into_iter().map(|o| (o.params, o.returns)).collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected.iter().map(|(p, r)| (p.to_string(), r.to_string())).collect()
    }

    #[test]
    fn rust_signatures_map_to_letters() {
        assert_eq!(of("(String, Value) -> ()"), pairs(&[("(sm)", "v")]));
        assert_eq!(of("(String) -> Value"), pairs(&[("(s)", "m")]));
        assert_eq!(of("() -> Vec<String>"), pairs(&[("()", "[s]")]));
        assert_eq!(of("(u64, i64) -> bool"), pairs(&[("(Ll)", "b")]));
        assert_eq!(of("(Value) -> Vec<Vec<f64>>"), pairs(&[("(m)", "[[d]]")]));
        assert_eq!(of("(Vec<String>) -> Vec<Vec<String>>"), pairs(&[("([s])", "[[s]]")]));
        assert_eq!(of("(Vec<(String, Value)>) -> ()"), pairs(&[("(m)", "v")]));
        assert_eq!(of("() -> Vec<&str>"), pairs(&[("()", "[s]")]));
        assert_eq!(of("(String) -> [name, signature, help]"), pairs(&[("(s)", "m")]));
        assert_eq!(of("() -> Vec<(String, Value)>"), pairs(&[("()", "[(sm)]")]));
    }

    #[test]
    fn trailing_options_give_overloads() {
        assert_eq!(of("(Option<i64>) -> i32"), pairs(&[("()", "i"), ("(l)", "i")]));
        assert_eq!(
            of("(String, String, Option<String>, Option<Value>) -> u64"),
            pairs(&[("(ss)", "L"), ("(sss)", "L"), ("(sssm)", "L")])
        );
        assert_eq!(of("(Option<String>, bool) -> ()"), pairs(&[("(mb)", "v")]));
    }

    #[test]
    fn python_signatures_are_dynamic() {
        assert_eq!(of("(key, value=None)"), pairs(&[("(m)", "m"), ("(mm)", "m")]));
        assert_eq!(of("(a, *rest, **options)").len(), MAX_ARITY);
        assert_eq!(of("(a, *rest)")[0], ("(m)".to_owned(), "m".to_owned()));
        assert_eq!(of("(a: int, b: str = 'x') -> int"), pairs(&[("(m)", "m"), ("(mm)", "m")]));
        assert_eq!(of("()"), pairs(&[("()", "m")]));
    }

    #[test]
    fn a_qi_service_keeps_its_own_signatures() {
        assert_eq!(of(&qi_signature("(m[s])", "{sm}")), pairs(&[("(m[s])", "{sm}")]));
    }

    #[test]
    fn an_unreadable_signature_takes_any_count_of_arguments() {
        let all = of("whatever");
        assert_eq!(all.len(), MAX_ARITY + 1);
        assert_eq!(all[0], ("()".to_owned(), "m".to_owned()));
        assert_eq!(all[2], ("(mm)".to_owned(), "m".to_owned()));
    }
}
