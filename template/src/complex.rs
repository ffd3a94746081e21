//! Go's `complex128`, the value of a complex literal (`1i`, `2+3i`) in a template. Nothing
//! in Sprig or Helm takes one, but it prints, and `printf "%T"`, `kindOf` and `typeOf`
//! name it, as in Go.

use std::any::Any;
use std::rc::Rc;

use chartkit_yaml::gonum::format_g;

use crate::value::{Object, Value};

pub(crate) fn complex_value(re: f64, im: f64) -> Value {
    Value::Object(Rc::new(Complex128 { re, im }))
}

/// The (real, imaginary) parts of a value that is a complex128.
pub(crate) fn parts(o: &Rc<dyn Object>) -> Option<(f64, f64)> {
    (o.as_any().downcast_ref::<Complex128>()).map(|c| (c.re, c.im))
}

#[derive(Debug, Clone, Copy)]
struct Complex128 {
    re: f64,
    im: f64,
}

impl Object for Complex128 {
    fn type_name(&self) -> String {
        "complex128".into()
    }

    fn kind(&self) -> &'static str {
        "complex128"
    }

    /// `fmt`'s `%v`: both parts as `%g`, the imaginary one always signed.
    fn format(&self) -> String {
        let im = format_g(self.im, false);
        let sign = if im.starts_with(['-', '+']) { "" } else { "+" };
        format!("({}{sign}{im}i)", format_g(self.re, false))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_as_go_prints_a_complex128() {
        let text = |re, im| Complex128 { re, im }.format();
        assert_eq!(text(0.0, 1.0), "(0+1i)");
        assert_eq!(text(2.5, -3.0), "(2.5-3i)");
        assert_eq!(text(0.0, 1e21), "(0+1e+21i)");
        assert_eq!(text(0.0, f64::INFINITY), "(0+Infi)");
    }
}
