//! Go's regular expressions in every Sprig regex function, case by case: the syntax of
//! Go 1.25's `regexp/syntax` (classes, escapes, flags, names, repetition limits, the
//! errors and their wording), its Unicode 15.0 classes and case folding, and Go's way of
//! finding all matches, replacing, expanding `$name` and splitting. Each expected output
//! is what helm 4.1.4 renders; `expected_outputs_are_helms` checks that again with the
//! real helm when it is installed, errors included.
//!
//! A case's expectation is the raw output, or `ERR:` and the end of helm's error
//! message from `error calling` on.

mod common;

use common::{helm_binary, helm_error, helm_raw, render_error, render_raw};

/// (behaviour, template, expected output or `ERR:` error)
type Case = (&'static str, &'static str, &'static str);

const CASES: &[Case] = &[
    (
        "issue #18: class escape beside '-' in brackets (double-quoted pattern)",
        r#"{{ regexMatch "^[\\w-\\.]+$" "ab-c.d" }}"#,
        "true",
    ),
    (
        "issue #18: the same with a raw pattern",
        r#"{{ regexMatch `^[\w-\.]+$` "ab-c.d" }}"#,
        "true",
    ),
    (
        "issue #18: a required-style check passes",
        r#"{{ if not (regexMatch `^[\w-\.]+$` "my-app.v1") }}{{ fail "invalid name" }}{{ end }}ok"#,
        "ok",
    ),
    (
        "[\\w-\\.] is \\w, '-' and '.': no range, so '/' is out",
        r#"{{ regexMatch `^[\w-\.]+$` "ab/c" }}"#,
        "false",
    ),
    (
        "[\\d-z]: digits, '-' and 'z'",
        r#"{{ regexFindAll `[\d-z]+` "1-z y 2" -1 }}"#,
        "[1-z 2]",
    ),
    (
        "[\\s-a]: space class, '-' and 'a'",
        r#"{{ regexFindAll `[\s-a]+` "b a-\tb" -1 | toJson }}"#,
        r#"[" a-\t"]"#,
    ),
    (
        "[\\p{Greek}-z]: Greek, '-' and 'z'",
        r#"{{ regexFindAll `[\p{Greek}-z]+` "aα-zb" -1 }}"#,
        "[α-z]",
    ),
    (
        "[[:digit:]-z]: digits, '-' and 'z'",
        r#"{{ regexFindAll `[[:digit:]-z]+` "a1-zy" -1 }}"#,
        "[1-z]",
    ),
    (
        "a class escape cannot end a range",
        r#"{{ mustRegexMatch `[a-\d]` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\d`"#,
    ),
    (
        "[a-] is 'a' and '-'",
        r#"{{ regexFindAll `[a-]+` "b-a-c" -1 }}"#,
        "[-a-]",
    ),
    (
        "[-a] is '-' and 'a'",
        r#"{{ regexFindAll `[-a]+` "b-a-c" -1 }}"#,
        "[-a-]",
    ),
    (
        "[a-b-c] is a range, then '-' and 'c'",
        r#"{{ regexFindAll `[a-b-c]+` "d-cab" -1 }}"#,
        "[-cab]",
    ),
    (
        "']' first in a class is a member",
        r#"{{ regexFindAll `[]a]+` "x]a]y" -1 }}"#,
        "[]a]]",
    ),
    (
        "']' first after '^' is a member",
        r#"{{ regexFindAll `[^]a]+` "x]a]yz" -1 }}"#,
        "[x yz]",
    ),
    (
        "an empty class never closes",
        r#"{{ mustRegexMatch `x[]` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: missing closing ]: `[]`",
    ),
    (
        "an unclosed class",
        r#"{{ mustRegexMatch `[a` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: missing closing ]: `[a`",
    ),
    (
        "a reversed range",
        r#"{{ mustRegexMatch `[z-a]` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `z-a`",
    ),
    (
        "escapes inside classes",
        r#"{{ regexFindAll `[\x41-\x43\n\t]+` "zAB\tC\nz" -1 | toJson }}"#,
        r#"["AB\tC\n"]"#,
    ),
    (
        "'[' inside a class is a member",
        r#"{{ regexFindAll `[[a]+` "x[a[y" -1 }}"#,
        "[[a[]",
    ),
    (
        "negated classes match newline (Go's Perl flags)",
        r#"{{ regexMatch `[^a]` "\n" }}"#,
        "true",
    ),
    (
        "negated class",
        r#"{{ regexFindAll `[^\d\s]+` "ab 12 cd3" -1 }}"#,
        "[ab cd]",
    ),
    (
        "\\b is an error inside a class",
        r#"{{ mustRegexMatch `[\b]` "b" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\b`"#,
    ),
    (
        "\\Q is an error inside a class",
        r#"{{ mustRegexMatch `[\Q]` "Q" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\Q`"#,
    ),
    (
        "[[:alpha:]] is ASCII",
        r#"{{ regexFindAll `[[:alpha:]]+` "héllo" -1 }}"#,
        "[h llo]",
    ),
    (
        "[[:^alpha:]] negates",
        r#"{{ regexFindAll `[[:^alpha:]]+` "ab12é-c" -1 }}"#,
        "[12é-]",
    ),
    (
        "[[:space:]] has \\v (\\s has not)",
        r#"{{ regexMatch `[[:space:]]` "\v" }}|{{ regexMatch `\s` "\v" }}"#,
        "true|false",
    ),
    (
        "[[:word:]] [[:punct:]] [[:xdigit:]]",
        r#"{{ regexFindAll `[[:word:]]+` "a_1-b" -1 }}|{{ regexFindAll `[[:punct:]]+` "a!/:@[`{~b" -1 }}|{{ regexFindAll `[[:xdigit:]]+` "0fG9a" -1 }}"#,
        "[a_1 b]|[!/:@[`{~]|[0f 9a]",
    ),
    (
        "[[:print:]] [[:graph:]] [[:blank:]] [[:cntrl:]]",
        r#"{{ regexFindAll `[[:print:]]+` "a b\tc" -1 | toJson }}|{{ regexFindAll `[[:graph:]]+` "a b" -1 }}|{{ regexFindAll `[[:blank:]]+` "a \tb\nc" -1 | toJson }}|{{ regexMatch `[[:cntrl:]]` "\x7f" }}"#,
        r#"["a b","c"]|[a b]|[" \t"]|true"#,
    ),
    (
        "[[:upper:]] [[:lower:]] [[:alnum:]] [[:digit:]] [[:ascii:]]",
        r#"{{ regexFindAll `[[:upper:]]+` "aBCd" -1 }}|{{ regexFindAll `[[:lower:]]+` "aBCd" -1 }}|{{ regexFindAll `[[:alnum:]]+` "a1_b" -1 }}|{{ regexFindAll `[[:digit:]]+` "a١1" -1 }}|{{ regexFindAll `[[:ascii:]]+` "aé" -1 }}"#,
        "[BC]|[a d]|[a1 b]|[1]|[a]",
    ),
    (
        "an unknown POSIX class",
        r#"{{ mustRegexMatch `[[:foo:]]` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `[:foo:]`",
    ),
    (
        "a POSIX class outside brackets is a class of its letters",
        r#"{{ regexFindAll `[:alpha:]+` "xalpha:" -1 }}"#,
        "[alpha:]",
    ),
    (
        "'[:' without ':]' is literal text in a class",
        r#"{{ regexFindAll `[[:alpha]+` "x[:ap" -1 }}"#,
        "[[:ap]",
    ),
    (
        "(?i) folds POSIX classes (ſ and the Kelvin sign)",
        r#"{{ regexFindAll `(?i)[[:upper:]]+` "aſK" -1 }}"#,
        "[aſK]",
    ),
    (
        "\\d is ASCII",
        r#"{{ regexMatch `\d` "٣" }}|{{ regexMatch `\d` "3" }}"#,
        "false|true",
    ),
    (
        "\\s is [\\t\\n\\f\\r ]: no \\v, no NBSP",
        r#"{{ regexMatch `\s` "\f" }}|{{ regexMatch `\s` "\v" }}|{{ regexMatch `\s` "\u00a0" }}"#,
        "true|false|false",
    ),
    (
        "\\w is ASCII",
        r#"{{ regexMatch `^\w+$` "héllo" }}|{{ regexMatch `^\w+$` "hello_1" }}"#,
        "false|true",
    ),
    (
        "\\D \\S \\W",
        r#"{{ regexFindAll `\D+` "a1é2" -1 }}|{{ regexFindAll `\S+` "a b\vc" -1 | toJson }}|{{ regexFindAll `\W+` "a-é_b" -1 }}"#,
        r#"[a é]|["a","b\u000bc"]|[-é]"#,
    ),
    (
        "\\b is an ASCII word boundary",
        r#"{{ regexMatch `\bé` "é" }}|{{ regexMatch `a\b` "aé" }}|{{ regexFindAll `\b\w+\b` "ab cd-ef" -1 }}"#,
        "false|true|[ab cd ef]",
    ),
    (
        "\\B",
        r#"{{ regexFindAll `\B.\B` "abc" -1 }}|{{ regexMatch `\Bé` " é" }}"#,
        "[b]|true",
    ),
    (
        "(?i)\\W leaves out what (?i)\\w folds in",
        r#"{{ regexMatch `(?i)\W` "K" }}|{{ regexMatch `(?i)\W` "ſ" }}|{{ regexMatch `(?i)\w` "K" }}|{{ regexMatch `\w` "K" }}"#,
        "false|false|true|true",
    ),
    (
        "\\pL and \\PL",
        r#"{{ regexFindAll `\pL+` "日本語abc1é" -1 }}|{{ regexFindAll `\PL+` "ab1-2c" -1 }}"#,
        "[日本語abc é]|[1-2]",
    ),
    (
        "\\p{Greek}, \\p{^Greek}, \\P{^Greek}",
        r#"{{ regexFindAll `\p{Greek}+` "aαβb" -1 }}|{{ regexFindAll `\p{^Greek}+` "aαβb" -1 }}|{{ regexFindAll `\P{^Greek}+` "aαβb" -1 }}"#,
        "[αβ]|[a b]|[αβ]",
    ),
    (
        "\\pN and \\p{Nd}",
        r#"{{ regexFindAll `\pN+` "a½٣1b" -1 }}|{{ regexFindAll `\p{Nd}+` "a½٣1b" -1 }}"#,
        "[½٣1]|[٣1]",
    ),
    (
        "Unicode classes are Unicode 15.0 (U+1C89 is new in 16.0)",
        r#"{{ regexMatch `\p{Lu}` "\u1C89" }}|{{ regexMatch `\p{Cn}` "\u1C89" }}|{{ regexMatch `\p{Han}` "\U0002EBF0" }}"#,
        "false|true|false",
    ),
    (
        "category aliases and loose names (Go 1.25)",
        r#"{{ regexMatch `\p{Letter}` "a" }}|{{ regexMatch `\p{uppercase letter}` "A" }}|{{ regexMatch `\p{L_u}` "A" }}|{{ regexMatch `\p{greek}` "α" }}|{{ regexMatch `\p{digit}` "٣" }}"#,
        "true|true|true|true|true",
    ),
    (
        "Any, ASCII, Assigned, Cn, LC",
        r#"{{ regexMatch `\p{Any}` "\U0010FFFF" }}|{{ regexMatch `\p{ASCII}` "é" }}|{{ regexMatch `\p{Assigned}` "\u0378" }}|{{ regexMatch `\p{Cn}` "\u0378" }}|{{ regexMatch `\p{LC}` "a" }}"#,
        "true|false|false|true|true",
    ),
    (
        "multi-word script names are errors in Go 1.25",
        r#"{{ mustRegexMatch `\p{Old_Italic}` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `\p{Old_Italic}`"#,
    ),
    (
        "script codes are not names",
        r#"{{ mustRegexMatch `\p{Latn}` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `\p{Latn}`"#,
    ),
    (
        "scripts new in Unicode 16 are unknown",
        r#"{{ mustRegexMatch `\p{Garay}` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `\p{Garay}`"#,
    ),
    (
        "an unknown class name",
        r#"{{ mustRegexMatch `\p{Foo}` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `\p{Foo}`"#,
    ),
    (
        "an unclosed class name",
        r#"{{ mustRegexMatch `\p{Greek` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `\p{Greek`"#,
    ),
    (
        "\\p at the end",
        r#"{{ mustRegexMatch `a\p` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `\p`"#,
    ),
    (
        "a one-letter name that is not a class",
        r#"{{ mustRegexMatch `\pX` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid character class range: `\pX`"#,
    ),
    (
        "(?i) folds Unicode classes",
        r#"{{ regexMatch `(?i)\p{Lu}` "a" }}|{{ regexMatch `(?i)\P{Lu}` "a" }}|{{ regexMatch `(?i)\p{L}` "\u0345" }}"#,
        "true|false|true",
    ),
    (
        "(?i) does not fold LC (Go has no fold table for it)",
        r#"{{ regexMatch `(?i)\p{LC}` "\u0345" }}|{{ regexMatch `(?i)\p{Cased_Letter}` "\u0345" }}"#,
        "false|false",
    ),
    (
        "C escapes \\a \\f \\t \\n \\r \\v",
        r#"{{ regexMatch `^\a\f\t\n\r\v$` "\a\f\t\n\r\v" }}"#,
        "true",
    ),
    (
        "hex escapes",
        r#"{{ regexMatch `^\x41\x{263a}\x{10FFFF}$` "A☺\U0010FFFF" }}"#,
        "true",
    ),
    (
        "octal escapes",
        r#"{{ regexMatch `^\101\0\08$` "A\x00\x008" }}|{{ regexMatch `^\1234$` "S4" }}"#,
        "true|true",
    ),
    (
        "a single digit is a backreference, which RE2 lacks",
        r#"{{ mustRegexMatch `(a)\1` "aa" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\1`"#,
    ),
    (
        "\\8 is not octal",
        r#"{{ mustRegexMatch `\8` "8" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\8`"#,
    ),
    (
        "escaped punctuation, \\_ and \\<",
        r#"{{ regexMatch `^\<\>\_\-\#\ \.$` "<>_-# ." }}"#,
        "true",
    ),
    (
        "\\e is not an escape in Go",
        r#"{{ mustRegexMatch `\e` "e" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\e`"#,
    ),
    (
        "\\Z is not an escape in Go",
        r#"{{ mustRegexMatch `a\Z` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\Z`"#,
    ),
    (
        "\\C is not supported",
        r#"{{ mustRegexMatch `\C` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\C`"#,
    ),
    (
        "escaping a non-ASCII character",
        r#"{{ mustRegexMatch `\é` "é" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\é`"#,
    ),
    (
        "\\x{} beyond U+10FFFF",
        r#"{{ mustRegexMatch `\x{110000}` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\x{110000`"#,
    ),
    (
        "\\x{} with no digits",
        r#"{{ mustRegexMatch `\x{}` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\x{}`"#,
    ),
    (
        "\\x with a non-hex digit",
        r#"{{ mustRegexMatch `\xg1` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\xg1`"#,
    ),
    (
        "\\x at the end",
        r#"{{ mustRegexMatch `\x` "a" }}"#,
        r#"ERR:error calling mustRegexMatch: error parsing regexp: invalid escape sequence: `\x`"#,
    ),
    (
        "a trailing backslash",
        r#"{{ mustRegexMatch `a\` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: trailing backslash at end of expression: ``",
    ),
    (
        "\\A and \\z",
        r#"{{ regexMatch `\Aa` "ba" }}|{{ regexMatch `a\z` "a\n" }}|{{ regexMatch `(?m)\Ab` "a\nb" }}"#,
        "false|false|false",
    ),
    (
        "\\Q...\\E quotes",
        r#"{{ regexMatch `^\Q.*+\E$` ".*+" }}|{{ regexMatch `^\Q.*+\E$` "a" }}"#,
        "true|false",
    ),
    (
        "\\Q without \\E quotes to the end",
        r#"{{ regexFind `a\Q.*(` "xa.*(" }}"#,
        "a.*(",
    ),
    (
        "a repetition after \\Q...\\E takes the last character",
        r#"{{ regexFind `\Qab\E*` "abbb" }}|{{ regexFind `\Qab\E{2}` "abbb" }}"#,
        "abbb|abb",
    ),
    (
        "(?i)",
        r#"{{ regexMatch `(?i)abc` "ABC" }}|{{ regexMatch `a(?i)b` "aB" }}|{{ regexMatch `a(?i)b` "AB" }}"#,
        "true|true|false",
    ),
    (
        "(?i:...) is scoped",
        r#"{{ regexMatch `(?i:a)b` "Ab" }}|{{ regexMatch `(?i:a)b` "AB" }}"#,
        "true|false",
    ),
    (
        "flags set in a group end with it",
        r#"{{ regexMatch `((?i)a)b` "AB" }}|{{ regexMatch `((?i)a)b` "Ab" }}"#,
        "false|true",
    ),
    (
        "flags carry across alternatives",
        r#"{{ regexMatch `^(?:x|(?i)a|b)$` "B" }}"#,
        "true",
    ),
    (
        "(?m) ^ and $",
        r#"{{ regexMatch `^b` "a\nb" }}|{{ regexMatch `(?m)^b` "a\nb" }}|{{ regexMatch `(?m)a$` "a\nb" }}"#,
        "false|true|true",
    ),
    (
        "$ without (?m) is the end of the text only",
        r#"{{ regexMatch `a$` "a\n" }}|{{ regexFindAll `(?m)$` "a\nb" -1 | len }}"#,
        "false|2",
    ),
    (
        "(?s) lets . match newline",
        r#"{{ regexMatch `a.b` "a\nb" }}|{{ regexMatch `(?s)a.b` "a\nb" }}"#,
        "false|true",
    ),
    (
        "(?U) swaps greediness",
        r#"{{ regexFind `(?U)a+` "aaa" }}|{{ regexFind `(?U)a+?` "aaa" }}|{{ regexFind `(?U)a{1,3}` "aaa" }}|{{ regexFind `(?U)(?-U)a+` "aaa" }}"#,
        "a|aaa|a|aaa",
    ),
    (
        "(?i-i) and (?ims)",
        r#"{{ regexMatch `(?i-i)A` "a" }}|{{ regexMatch `(?ims)^A.$` "x\na\n" }}"#,
        "false|true",
    ),
    (
        "(?) is an empty flag group",
        r#"{{ regexMatch `a(?)b` "ab" }}"#,
        "true",
    ),
    (
        "(?x) is not supported",
        r#"{{ mustRegexMatch `(?x) a` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid or unsupported Perl syntax: `(?x`",
    ),
    (
        "(?i-) has no flag after '-'",
        r#"{{ mustRegexMatch `(?i-)a` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid or unsupported Perl syntax: `(?i-)`",
    ),
    (
        "(?--i) has two '-'",
        r#"{{ mustRegexMatch `(?--i)a` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid or unsupported Perl syntax: `(?--`",
    ),
    (
        "(?P=name) is not supported",
        r#"{{ mustRegexMatch `(?P<n>a)(?P=n)` "aa" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid or unsupported Perl syntax: `(?P`",
    ),
    (
        "(?'name') is not supported",
        r#"{{ mustRegexMatch `(?'n'a)` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid or unsupported Perl syntax: `(?'`",
    ),
    (
        "an unfinished (?",
        r#"{{ mustRegexMatch `a(?` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid or unsupported Perl syntax: `(?`",
    ),
    (
        "(?P<name>) and ${name}",
        r#"{{ regexReplaceAll `(?P<first>\w+) (?P<last>\w+)` "Jane Doe" "${last}, ${first}" }}"#,
        "Doe, Jane",
    ),
    (
        "(?<name>) (Go 1.22+) and $name",
        r#"{{ regexReplaceAll `(?<y>\d{4})-(?<m>\d\d)` "2024-05" "$m/$y" }}"#,
        "05/2024",
    ),
    (
        "repeated names: $name is the first that matched",
        r#"{{ regexReplaceAll `(?P<n>a)(?P<n>b)` "ab" "[$n]" }}|{{ regexReplaceAll `(?P<n>x)?(?P<n>b)` "b" "[$n]" }}"#,
        "[a]|[b]",
    ),
    (
        "a group named 01 is reached by $01",
        r#"{{ regexReplaceAll `(?P<01>a)` "a" "[$01]" }}"#,
        "[a]",
    ),
    (
        "a name with '-'",
        r#"{{ mustRegexMatch `(?P<a-b>x)` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid named capture: `(?P<a-b>`",
    ),
    (
        "an empty name",
        r#"{{ mustRegexMatch `(?P<>x)` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid named capture: `(?P<>`",
    ),
    (
        "an unclosed name",
        r#"{{ mustRegexMatch `(?P<name` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid named capture: `(?P<name`",
    ),
    (
        "a non-ASCII name",
        r#"{{ mustRegexMatch `(?P<é>x)` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid named capture: `(?P<é>`",
    ),
    (
        "{1000} is the largest count",
        r#"{{ regexMatch `^a{1000}$` (repeat 1000 "a") }}"#,
        "true",
    ),
    (
        "{1001} is too many",
        r#"{{ mustRegexMatch `a{1001}` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid repeat count: `{1001}`",
    ),
    (
        "{1001,} is too many",
        r#"{{ mustRegexMatch `a{1001,}` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid repeat count: `{1001,}`",
    ),
    (
        "{2,1}: min over max",
        r#"{{ mustRegexMatch `a{2,1}` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid repeat count: `{2,1}`",
    ),
    (
        "nested counts multiply past 1000",
        r#"{{ mustRegexMatch `(a{500}){3}` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid repeat count: `{3}`",
    ),
    (
        "nested counts within 1000",
        r#"{{ regexMatch `^(a{10}){100}$` (repeat 1000 "a") }}"#,
        "true",
    ),
    (
        "a count past 10^8",
        r#"{{ mustRegexMatch `a{1000000000}` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid repeat count: `{1000000000}`",
    ),
    (
        "{,n} and a leading zero are literal text",
        r#"{{ regexMatch `^a{,5}$` "a{,5}" }}|{{ regexMatch `^a{01}$` "a{01}" }}|{{ regexMatch `^a{1$` "a{1" }}"#,
        "true|true|true",
    ),
    (
        "counted repetitions",
        r#"{{ regexFind `a{2}` "aaaa" }}|{{ regexFind `a{2,}` "aaaa" }}|{{ regexFind `a{1,3}` "aaaa" }}|{{ regexFind `a{2,3}?` "aaaa" }}|{{ regexFind `a{0}b` "ab" }}"#,
        "aa|aaaa|aaa|aa|b",
    ),
    (
        "x** is an error, not a doubled star",
        r#"{{ mustRegexMatch `x**` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid nested repetition operator: `**`",
    ),
    (
        "x++ (possessive in Perl) is an error",
        r#"{{ mustRegexMatch `x++` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid nested repetition operator: `++`",
    ),
    (
        "x*?* is an error",
        r#"{{ mustRegexMatch `x*?*` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid nested repetition operator: `*?*`",
    ),
    (
        "x{2}{3} is an error",
        r#"{{ mustRegexMatch `x{2}{3}` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid nested repetition operator: `{2}{3}`",
    ),
    (
        "x{2}* is an error",
        r#"{{ mustRegexMatch `ax{2}*b` "x" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: invalid nested repetition operator: `{2}*`",
    ),
    (
        "a repetition with nothing to repeat",
        r#"{{ mustRegexMatch `*a` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: missing argument to repetition operator: `*`",
    ),
    (
        "a repetition after '|'",
        r#"{{ mustRegexMatch `a|*` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: missing argument to repetition operator: `*`",
    ),
    (
        "a repetition after '('",
        r#"{{ mustRegexMatch `(+a)` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: missing argument to repetition operator: `+`",
    ),
    (
        "a count with nothing to repeat",
        r#"{{ mustRegexMatch `{2}` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: missing argument to repetition operator: `{2}`",
    ),
    (
        "repeating a group of a repetition is fine",
        r#"{{ regexFind `(?:a*)*` "aab" }}|{{ regexFind `(a+)+` "aab" }}"#,
        "aa|aa",
    ),
    (
        "a flag group between two stars",
        r#"{{ regexFind `a*(?i)*` "aaa" }}"#,
        "aaa",
    ),
    (
        "repeated assertions and empty groups",
        r#"{{ regexMatch `^*a` "a" }}|{{ regexMatch `\b+a` "a" }}|{{ regexFind `(?:)*a` "ba" }}|{{ regexReplaceAll `()+` "ab" "-" }}"#,
        "true|true|a|-a-b-",
    ),
    (
        "non-greedy repetitions",
        r#"{{ regexFind `a+?` "aaa" }}|{{ regexFind `a*?b` "aab" }}|{{ regexFind `a??` "a" | quote }}"#,
        r#"a|aab|"""#,
    ),
    (
        "missing closing )",
        r#"{{ mustRegexMatch `(a` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: missing closing ): `(a`",
    ),
    (
        "unexpected )",
        r#"{{ mustRegexMatch `a)` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: unexpected ): `a)`",
    ),
    (
        "empty alternatives",
        r#"{{ regexFind `a|` "b" | quote }}|{{ regexFind `|a` "a" | quote }}|{{ regexFind `a||b` "b" }}|{{ regexMatch `(|)` "" }}"#,
        r#"""|""||true"#,
    ),
    (
        "leftmost-first alternation",
        r#"{{ regexFind `a|ab` "ab" }}|{{ regexFind `ab|a` "ab" }}|{{ regexFind `(a|ab)(c|bcd)` "abcd" }}"#,
        "a|ab|abcd",
    ),
    (
        "nesting depth 1000 is accepted",
        r#"{{ regexMatch (printf "%sa%s" (repeat 999 "(") (repeat 999 ")")) "a" }}"#,
        "true",
    ),
    (
        "nesting deeper than 1000 is an error (regexMatch is false)",
        r#"{{ regexMatch (printf "%sa%s" (repeat 1000 "(") (repeat 1000 ")")) "a" }}|{{ regexMatch (printf "^%sa%s$" (repeat 999 "(") (repeat 999 ")")) "a" }}"#,
        "false|false",
    ),
    (
        "(?i)k matches the Kelvin sign and back",
        r#"{{ regexMatch `(?i)k` "\u212A" }}|{{ regexMatch "(?i)\u212A" "k" }}|{{ regexMatch `k` "\u212A" }}"#,
        "true|true|false",
    ),
    (
        "(?i)s matches long s",
        r#"{{ regexMatch `(?i)s` "ſ" }}|{{ regexMatch `(?i)ſ` "S" }}"#,
        "true|true",
    ),
    (
        "(?i)ß matches ẞ",
        r#"{{ regexMatch `(?i)ß` "ẞ" }}|{{ regexMatch `(?i)ẞ` "ß" }}|{{ regexMatch `(?i)ß` "ss" }}"#,
        "true|true|false",
    ),
    (
        "dotted and dotless i do not fold",
        r#"{{ regexMatch `(?i)i` "İ" }}|{{ regexMatch `(?i)İ` "i" }}|{{ regexMatch `(?i)ı` "I" }}"#,
        "false|false|false",
    ),
    (
        "sigma's three forms",
        r#"{{ regexFindAll `(?i)σ` "Σσς" -1 }}"#,
        "[Σ σ ς]",
    ),
    (
        "titlecase digraphs",
        r#"{{ regexFindAll `(?i)ǅ` "ǄǅǆDž" -1 }}"#,
        "[Ǆ ǅ ǆ]",
    ),
    (
        "micro sign and mu",
        r#"{{ regexMatch `(?i)µ` "Μ" }}|{{ regexMatch `(?i)μ` "µ" }}"#,
        "true|true",
    ),
    (
        "case-insensitive ranges",
        r#"{{ regexFindAll `(?i)[a-c]+` "xABCabcx" -1 }}|{{ regexMatch `(?i)[k]` "\u212A" }}"#,
        "[ABCabc]|true",
    ),
    (
        "(?i)[^k] leaves out every k",
        r#"{{ regexMatch `(?i)[^k]` "\u212A" }}|{{ regexMatch `(?i)[^k]` "K" }}"#,
        "false|false",
    ),
    (
        "folding is Unicode 15.0's (ƛ's capital and ΐ's twin came later)",
        r#"{{ regexMatch `(?i)ƛ` "\uA7DC" }}|{{ regexMatch `(?i)ΐ` "\u1FD3" }}"#,
        "false|false",
    ),
    (
        "Greek and Cyrillic folding",
        r#"{{ regexMatch `(?i)ω` "Ω" }}|{{ regexMatch `(?i)ω` "\u2126" }}|{{ regexMatch `(?i)в` "\u1C80" }}"#,
        "true|true|true",
    ),
    (
        "regexFind returns the leftmost match",
        r#"{{ regexFind `a+` "baaac" }}|{{ regexFind `x` "abc" | quote }}"#,
        r#"aaa|"""#,
    ),
    (
        "regexFind on an empty match",
        r#"{{ regexFind `a*` "baaa" | quote }}"#,
        r#""""#,
    ),
    (
        "regexFind panics on a bad pattern",
        r#"{{ regexFind `(` "x" }}"#,
        "ERR:error calling regexFind: regexp: Compile(`(`): error parsing regexp: missing closing ): `(`",
    ),
    (
        "the panic quotes a pattern with a backquote",
        r#"{{ regexFind "`(" "x" }}"#,
        r#"ERR:error calling regexFind: regexp: Compile("`("): error parsing regexp: missing closing ): ``(`"#,
    ),
    (
        "the panic quotes a pattern with a tab in backquotes",
        r#"{{ regexFind "\t(" "x" }}"#,
        "ERR:error calling regexFind: regexp: Compile(`\t(`): error parsing regexp: missing closing ): `\t(`",
    ),
    (
        "mustRegexFind returns the error",
        r#"{{ mustRegexFind `[` "x" }}"#,
        "ERR:error calling mustRegexFind: error parsing regexp: missing closing ]: `[`",
    ),
    (
        "regexFindAll skips an empty match right after a match",
        r#"{{ regexFindAll `a*` "baaab" -1 | toJson }}"#,
        r#"["","aaa",""]"#,
    ),
    (
        "regexFindAll with a count",
        r#"{{ regexFindAll `a*` "baaab" 2 | toJson }}|{{ regexFindAll `a|b` "abab" 3 }}"#,
        r#"["","aaa"]|[a b a]"#,
    ),
    (
        "regexFindAll of the empty pattern",
        r#"{{ regexFindAll `` "abc" -1 | toJson }}|{{ regexFindAll `` "" -1 | toJson }}"#,
        r#"["","","",""]|[""]"#,
    ),
    (
        "regexFindAll with no match is a nil slice",
        r#"{{ regexFindAll `x` "abc" -1 | toJson }}|{{ regexFindAll `x` "abc" -1 | len }}|{{ regexFindAll `x` "abc" -1 }}"#,
        "null|0|[]",
    ),
    (
        "regexFindAll with n 0",
        r#"{{ regexFindAll `a` "aaa" 0 | toJson }}"#,
        "null",
    ),
    (
        "regexFindAll steps over multi-byte characters",
        r#"{{ regexFindAll `é*` "aéé b" -1 | toJson }}"#,
        r#"["","éé","",""]"#,
    ),
    (
        "regexFindAll of line starts",
        r#"{{ regexFindAll `(?m)^.` "ab\ncd\n" -1 }}|{{ regexFindAll `(?m)^` "a\nb\n" -1 | len }}"#,
        "[a c]|3",
    ),
    (
        "regexFindAll of word boundaries",
        r#"{{ regexFindAll `\b` "ab cd" -1 | len }}"#,
        "4",
    ),
    (
        "regexFindAll panics on a bad pattern",
        r#"{{ regexFindAll `a{1001}` "a" -1 }}"#,
        "ERR:error calling regexFindAll: regexp: Compile(`a{1001}`): error parsing regexp: invalid repeat count: `{1001}`",
    ),
    (
        "mustRegexFindAll returns the error",
        r#"{{ mustRegexFindAll `(?<n` "a" -1 }}"#,
        "ERR:error calling mustRegexFindAll: error parsing regexp: invalid named capture: `(?<n`",
    ),
    (
        "regexReplaceAll of a pattern that matches empty and not",
        r#"{{ regexReplaceAll `a*` "baaab" "X" }}"#,
        "XbXbX",
    ),
    (
        "regexReplaceAll of the empty pattern",
        r#"{{ regexReplaceAll `` "abc" "-" }}|{{ regexReplaceAll `` "" "-" }}"#,
        "-a-b-c-|-",
    ),
    (
        "regexReplaceAll around multi-byte characters",
        r#"{{ regexReplaceAll `x*` "héllo" "-" }}"#,
        "-h-é-l-l-o-",
    ),
    (
        "$1 and ${1}",
        r#"{{ regexReplaceAll `a(x*)b` "-ab-axxb-" "${1}W" }}"#,
        "-W-xxW-",
    ),
    (
        "$1W names the group 1W, which does not exist",
        r#"{{ regexReplaceAll `a(x*)b` "-ab-axxb-" "$1W" }}"#,
        "---",
    ),
    (
        "$$ is a dollar; a lone $ stays",
        r#"{{ regexReplaceAll `(a)` "a" "$$1|$|$-|${|x$" }}"#,
        "$1|$|$-|${|x$",
    ),
    (
        "${1 without the brace stays as text",
        r#"{{ regexReplaceAll `(a)` "a" "${1" }}"#,
        "${1",
    ),
    (
        "$01 is not group 1",
        r#"{{ regexReplaceAll `(a)` "a" "[$01]" }}"#,
        "[]",
    ),
    (
        "$10 with one group is empty",
        r#"{{ regexReplaceAll `(a)` "a" "[$10]" }}"#,
        "[]",
    ),
    (
        "$0 is the whole match",
        r#"{{ regexReplaceAll `a(b)` "xaby" "<$0>" }}"#,
        "x<ab>y",
    ),
    (
        "names take letters and digits of any script",
        r#"{{ regexReplaceAll `(?P<n>a)` "a" "[$né][${n}é]" }}"#,
        "[][aé]",
    ),
    (
        "an unmatched group expands to nothing",
        r#"{{ regexReplaceAll `(a)|b` "ab" "[$1]" }}"#,
        "[a][]",
    ),
    (
        "a group under {0} never matches",
        r#"{{ regexReplaceAll `(a){0}b` "ab" "[$1]" }}|{{ regexReplaceAll `(a){0}(b)` "ab" "[$1$2]" }}"#,
        "a[]|a[b]",
    ),
    (
        "regexReplaceAll panics on a bad pattern",
        r#"{{ regexReplaceAll `a**` "a" "b" }}"#,
        "ERR:error calling regexReplaceAll: regexp: Compile(`a**`): error parsing regexp: invalid nested repetition operator: `**`",
    ),
    (
        "mustRegexReplaceAll returns the error",
        r#"{{ mustRegexReplaceAll `(?i` "a" "b" }}"#,
        "ERR:error calling mustRegexReplaceAll: error parsing regexp: invalid or unsupported Perl syntax: `(?i`",
    ),
    (
        "regexReplaceAllLiteral does not expand",
        r#"{{ regexReplaceAllLiteral `a` "banana" "$1" }}|{{ regexReplaceAllLiteral `(a)` "a" "${1}$$" }}"#,
        "b$1n$1n$1|${1}$$",
    ),
    (
        "regexReplaceAllLiteral of an empty-matching pattern",
        r#"{{ regexReplaceAllLiteral `a*` "baaab" "$" }}"#,
        "$b$b$",
    ),
    (
        "mustRegexReplaceAllLiteral returns the error",
        r#"{{ mustRegexReplaceAllLiteral `[` "a" "b" }}"#,
        "ERR:error calling mustRegexReplaceAllLiteral: error parsing regexp: missing closing ]: `[`",
    ),
    (
        "regexReplaceAllLiteral panics on a bad pattern",
        r#"{{ regexReplaceAllLiteral `\8` "a" "b" }}"#,
        r#"ERR:error calling regexReplaceAllLiteral: regexp: Compile(`\8`): error parsing regexp: invalid escape sequence: `\8`"#,
    ),
    (
        "a repeated group keeps its last iteration",
        r#"{{ regexReplaceAll `(a|b)*` "ab" "[$1]" }}|{{ regexReplaceAll `(a?)*` "aa" "[$1]" }}"#,
        "[b]|[a]",
    ),
    (
        "an inner group keeps an earlier iteration",
        r#"{{ regexReplaceAll `((a)|b)+` "ab" "[$1,$2]" }}|{{ regexReplaceAll `(?:(a)|(b))*` "ab" "[$1,$2]" }}"#,
        "[b,a]|[a,b]",
    ),
    (
        "groups of empty-matching repetitions",
        r#"{{ regexReplaceAll `(a*)*` "b" "[$1]" }}|{{ regexReplaceAll `(a*)+` "b" "[$1]" }}|{{ regexReplaceAll `(a*)*` "aa" "[$1]" }}|{{ regexReplaceAll `(a*?)*` "aa" "[$1]" }}"#,
        "[]b[]|[]b[]|[aa]|[]a[]a[]",
    ),
    (
        "empty-first alternations in repetitions",
        r#"{{ regexFind `(|a)*` "aa" | quote }}|{{ regexFind `(|a)+` "aa" | quote }}|{{ regexFind `(a|)*` "aa" | quote }}|{{ regexReplaceAll `(^|a)+` "aa" "[$1]" }}"#,
        r#"""|""|"aa"|[]a[a]"#,
    ),
    (
        "lazy and empty groups",
        r#"{{ regexReplaceAll `(a??)*` "aa" "[$1]" }}|{{ regexReplaceAll `(a|())*` "aa" "[$1,$2]" }}|{{ regexReplaceAll `(\b)*` "ab" "[$1]" }}|{{ regexReplaceAll `(a*)*$` "aab" "[$1]" }}"#,
        "[]a[]a[]|[a,]|[]a[]b[]|aab[]",
    ),
    (
        "regexSplit",
        r#"{{ regexSplit `a` "banana" -1 | toJson }}|{{ regexSplit `a` "banana" 2 | toJson }}|{{ regexSplit `,` "a,b,,c," 3 | toJson }}"#,
        r#"["b","n","n",""]|["b","nana"]|["a","b",",c,"]"#,
    ),
    (
        "regexSplit with n 0 is a nil slice",
        r#"{{ regexSplit `a` "banana" 0 | toJson }}"#,
        "null",
    ),
    (
        "regexSplit of the empty pattern",
        r#"{{ regexSplit `` "abc" -1 | toJson }}|{{ regexSplit `` "" -1 | toJson }}|{{ regexSplit `` "héllo" 3 | toJson }}"#,
        r#"["a","b","c"]|[]|["h","é","llo"]"#,
    ),
    (
        "regexSplit of an empty string",
        r#"{{ regexSplit `x` "" -1 | toJson }}|{{ regexSplit `x*` "" -1 | toJson }}"#,
        r#"[""]|[""]"#,
    ),
    (
        "regexSplit by an empty-matching pattern",
        r#"{{ regexSplit `a*` "baaac" -1 | toJson }}|{{ regexSplit `(?m)^` "a\nb\nc" -1 | toJson }}"#,
        r#"["b","c"]|["a\n","b\n","c"]"#,
    ),
    (
        "regexSplit with leading and trailing separators",
        r#"{{ regexSplit `\s+` " a b " -1 | toJson }}"#,
        r#"["","a","b",""]"#,
    ),
    (
        "regexSplit panics on a bad pattern",
        r#"{{ regexSplit `(?P<>x)` "x" -1 }}"#,
        "ERR:error calling regexSplit: regexp: Compile(`(?P<>x)`): error parsing regexp: invalid named capture: `(?P<>`",
    ),
    (
        "mustRegexSplit returns the error",
        r#"{{ mustRegexSplit `\p{Foo}` "x" -1 }}"#,
        r#"ERR:error calling mustRegexSplit: error parsing regexp: invalid character class range: `\p{Foo}`"#,
    ),
    (
        "regexMatch is false for a bad pattern",
        r#"{{ regexMatch `(` "(" }}|{{ regexMatch `a**` "a" }}"#,
        "false|false",
    ),
    (
        "mustRegexMatch returns the error",
        r#"{{ mustRegexMatch `(?P<n>` "a" }}"#,
        "ERR:error calling mustRegexMatch: error parsing regexp: missing closing ): `(?P<n>`",
    ),
    (
        "regexQuoteMeta escapes Go's specials only",
        r#"{{ regexQuoteMeta "1.5-2.0?*+[]{}()|^$\\" }}|{{ regexQuoteMeta "é-#&~ " }}"#,
        r#"1\.5-2\.0\?\*\+\[\]\{\}\(\)\|\^\$\\|é-#&~ "#,
    ),
    (
        "regexQuoteMeta round trip",
        r#"{{ $s := "a.b*c{2}" }}{{ regexMatch (printf "^%s$" (regexQuoteMeta $s)) $s }}"#,
        "true",
    ),
    (
        "a nil slice in toYaml, toPrettyJson and %#v",
        r#"{{ $n := regexFindAll `x` "" -1 }}{{ toYaml $n }}|{{ toPrettyJson $n }}|{{ printf "%#v %v %T" $n $n $n }}|{{ dict "k" $n | toYaml }}|{{ list $n | toJson }}"#,
        "null|null|[]string(nil) [] []string|k: null|[null]",
    ),
    (
        "a nil slice is not deeply equal to an empty one",
        r#"{{ $n := regexFindAll `x` "" -1 }}{{ deepEqual $n (list) }}|{{ deepEqual $n (regexSplit `a` "b" 0) }}|{{ deepEqual (regexSplit `` "" -1) (regexFindAll `x` "" -1) }}"#,
        "false|true|false",
    ),
    (
        "a nil slice in toYamlPretty, deepCopy and toToml",
        r#"{{ $n := regexFindAll `x` "" -1 }}{{ dict "k" $n | toYamlPretty }}|{{ deepCopy $n | toJson }}|{{ toToml (dict "a" $n "b" 1) }}|{{ toToml (dict "l" (list $n)) }}"#,
        "k: []|null|b = 1\n|toml: cannot encode array with nil element",
    ),
    (
        "an empty slice from regexSplit",
        r#"{{ printf "%#v" (regexSplit `` "" -1) }}"#,
        "[]string{}",
    ),
    (
        "\\pL{1000} compiles",
        r#"{{ regexMatch `^\pL{1000}$` (repeat 1000 "é") }}"#,
        "true",
    ),
    (
        "a long alternation",
        r#"{{ regexMatch (printf "^(?:%s)$" (join "|" (until 300))) "299" }}"#,
        "true",
    ),
    (
        "empty matches of \\B step over multi-byte characters",
        r#"{{ regexFindAll `\B` "éé" -1 | len }}|{{ regexReplaceAll `\B` "éé" "-" }}|{{ regexReplaceAll `\B` "aé" "-" }}"#,
        "3|-é-é-|aé-",
    ),
    (
        "(?i) on a literal string",
        r#"{{ regexMatch `(?i)^straße$` "STRASSE" }}|{{ regexMatch `(?i)^straße$` "STRAẞE" }}|{{ regexMatch `(?i)^ǅemal$` "ǄEMAL" }}"#,
        "false|true|true",
    ),
];

/// What chartkit renders for a case: the output, or `ERR:` and the error as `helm
/// template` prints it.
fn ours(template: &str) -> String {
    match render_raw(template, "") {
        Ok(out) => out,
        Err(_) => format!("ERR:{}", render_error(&[("t.yaml", template)])),
    }
}

fn matches(got: &str, expected: &str) -> bool {
    match expected.strip_prefix("ERR:") {
        Some(error) => got.starts_with("ERR:") && got.ends_with(error),
        None => got == expected,
    }
}

#[test]
fn regex_functions_render_like_helm() {
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(behaviour, template, expected)| {
            let got = ours(template);
            (!matches(&got, expected)).then(|| {
                format!("{behaviour}\n  template: {template}\n  expected: {expected:?}\n  got:      {got:?}")
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn cases_are_many_and_distinct() {
    assert!(CASES.len() >= 150, "{} cases", CASES.len());
    let mut behaviours: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    behaviours.sort_unstable();
    behaviours.dedup();
    assert_eq!(
        behaviours.len(),
        CASES.len(),
        "each case names its own behaviour"
    );
}

/// The recorded expectations, and chartkit's output, against the real helm: the
/// successful cases in one `helm template` run, each failing case in its own (helm
/// stops at the first error), a few at a time.
#[test]
fn expected_outputs_are_helms() {
    if helm_binary().is_none() {
        eprintln!("skipping helm comparison: no helm binary (set CHARTKIT_HELM)");
        return;
    }
    let (errors, outputs): (Vec<&Case>, Vec<&Case>) =
        CASES.iter().partition(|c| c.2.starts_with("ERR:"));
    let mut failures = Vec::new();
    let snippets: Vec<&str> = outputs.iter().map(|c| c.1).collect();
    match helm_raw(&snippets, "").expect("helm present") {
        Ok(helms) => {
            for (case, helm) in outputs.iter().zip(helms) {
                if helm != case.2 {
                    failures.push(format!(
                        "{}\n  recorded: {:?}\n  helm:     {helm:?}",
                        case.0, case.2
                    ));
                }
            }
        }
        Err(e) => failures.push(format!("helm failed on the successful cases: {e}")),
    }
    let helm_errors: Vec<Option<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = errors
            .chunks(errors.len().div_ceil(4))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|c| helm_error(&[("t.yaml", c.1)]))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (case, helm) in errors.iter().zip(helm_errors) {
        let helm = helm.expect("helm present");
        let got = render_error(&[("t.yaml", case.1)]);
        if !matches(&format!("ERR:{helm}"), case.2) || got != helm {
            failures.push(format!(
                "{}\n  recorded: {:?}\n  helm:     {helm:?}\n  ours:     {got:?}",
                case.0, case.2
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ from helm:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
