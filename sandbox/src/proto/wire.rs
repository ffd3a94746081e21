//! The protobuf wire format, read without trusting it: every length is checked against
//! what is left, varints stop at ten bytes, and groups (which no Kubernetes message
//! uses) are refused.

/// One field's value as it appears on the wire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WireValue<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl WireValue<'_> {
    /// The wire type number, for error messages.
    pub fn wire_type(&self) -> u8 {
        match self {
            WireValue::Varint(_) => 0,
            WireValue::Fixed64(_) => 1,
            WireValue::Bytes(_) => 2,
            WireValue::Fixed32(_) => 5,
        }
    }
}

/// Malformed bytes, in the words of the Go code generated for Kubernetes' types.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    #[error("unexpected EOF")]
    Truncated,
    #[error("proto: integer overflow")]
    Overflow,
    #[error("proto: illegal tag {0} (wire type {1})")]
    BadTag(u64, u8),
    #[error("proto: illegal wireType {0}")]
    BadWireType(u8),
    #[error("proto: groups are not supported (field {0})")]
    Group(u64),
}

/// Reads the fields of one message in order.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// How many bytes have been read.
    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn varint(&mut self) -> Result<u64, WireError> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(WireError::Truncated);
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return Err(WireError::Overflow);
            }
            value |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(value);
            }
        }
        Err(WireError::Overflow)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(n).ok_or(WireError::Truncated)?;
        let bytes = self.buf.get(self.pos..end).ok_or(WireError::Truncated)?;
        self.pos = end;
        Ok(bytes)
    }

    /// The next field (number and value), or `None` at the end of the message.
    pub fn field(&mut self) -> Option<Result<(u32, WireValue<'a>), WireError>> {
        if self.pos >= self.buf.len() {
            return None;
        }
        Some(self.read_field())
    }

    fn read_field(&mut self) -> Result<(u32, WireValue<'a>), WireError> {
        let key = self.varint()?;
        let wire_type = (key & 7) as u8;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(WireError::BadTag(number, wire_type));
        }
        let value = match wire_type {
            0 => WireValue::Varint(self.varint()?),
            1 => {
                let b = self.take(8)?;
                WireValue::Fixed64(u64::from_le_bytes(
                    b.try_into().map_err(|_| WireError::Truncated)?,
                ))
            }
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).map_err(|_| WireError::Truncated)?;
                WireValue::Bytes(self.take(len)?)
            }
            5 => {
                let b = self.take(4)?;
                WireValue::Fixed32(u32::from_le_bytes(
                    b.try_into().map_err(|_| WireError::Truncated)?,
                ))
            }
            3 | 4 => return Err(WireError::Group(number)),
            other => return Err(WireError::BadWireType(other)),
        };
        Ok((number as u32, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(bytes: &[u8]) -> Result<Vec<(u32, WireValue<'_>)>, WireError> {
        let mut r = Reader::new(bytes);
        let mut out = Vec::new();
        while let Some(f) = r.field() {
            out.push(f?);
        }
        Ok(out)
    }

    #[test]
    fn reads_each_wire_type() {
        let bytes = [
            0x08, 0x96, 0x01, // 1: varint 150
            0x12, 0x02, b'h', b'i', // 2: bytes "hi"
            0x19, 1, 0, 0, 0, 0, 0, 0, 0, // 3: fixed64 1
            0x25, 2, 0, 0, 0, // 4: fixed32 2
        ];
        assert_eq!(
            fields(&bytes).unwrap(),
            vec![
                (1, WireValue::Varint(150)),
                (2, WireValue::Bytes(b"hi")),
                (3, WireValue::Fixed64(1)),
                (4, WireValue::Fixed32(2)),
            ]
        );
    }

    #[test]
    fn refuses_truncated_and_overlong_input() {
        assert_eq!(fields(&[0x12, 0x05, b'a']), Err(WireError::Truncated));
        assert_eq!(fields(&[0x08]), Err(WireError::Truncated));
        assert_eq!(
            fields(&[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f
            ]),
            Err(WireError::Overflow)
        );
        assert_eq!(fields(&[0x00]), Err(WireError::BadTag(0, 0)));
        assert_eq!(fields(&[0x0b]), Err(WireError::Group(1)));
        assert_eq!(fields(&[0x0e]), Err(WireError::BadWireType(6)));
        // A length past the end of memory, not only of the buffer.
        assert_eq!(
            fields(&[0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
            Err(WireError::Truncated)
        );
    }

    #[test]
    fn the_largest_varint_is_read() {
        let bytes = [
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert_eq!(
            fields(&bytes).unwrap(),
            vec![(1, WireValue::Varint(u64::MAX))]
        );
    }
}
