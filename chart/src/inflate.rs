//! Decompressing a whole chart archive in one call.
//!
//! Chart archives are read in full anyway, and decompression is most of the time it
//! takes to load one (a third of rendering kube-prometheus-stack, 7 MB unpacked).
//! libdeflate inflates a buffer about twice as fast as a streaming zlib, and the
//! result is one allocation that the chart's files can share instead of copying.

/// The decompressed archive, or `None` when the fast path does not apply: damaged data,
/// a size trailer that does not fit within `limit`, or data that does not end as one
/// complete tar archive in the first gzip member. The caller then reads the archive as
/// a stream, which also finds later members and reports damage where it is.
pub(crate) fn whole(gzip: &[u8], limit: u64) -> Option<Vec<u8>> {
    // The trailer's ISIZE is the last member's size modulo 2^32: a hint, not a promise.
    // A hint that is too small fails below and falls back to streaming.
    let trailer = gzip.len().checked_sub(4).map(|at| &gzip[at..])?;
    let hint = u32::from_le_bytes(trailer.try_into().ok()?) as u64;
    if hint > limit {
        return None;
    }
    let mut tar = vec![0u8; usize::try_from(hint).ok()?];
    let len = libdeflater::Decompressor::new()
        .gzip_decompress(gzip, &mut tar)
        .ok()?;
    tar.truncate(len);
    // libdeflate reads only the first member. When its tar data ends with the two zero
    // blocks that close an archive, any later member lies past that end, where Go's tar
    // reader (and so Helm) stops too; otherwise the streaming reader decides.
    tar.ends_with(&[0u8; 1024]).then_some(tar)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::whole;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    fn closed_tar(body: &[u8]) -> Vec<u8> {
        let mut tar = body.to_vec();
        tar.extend_from_slice(&[0u8; 1024]);
        tar
    }

    #[test]
    fn a_complete_archive_decompresses_whole() {
        let tar = closed_tar(b"entry data");
        assert_eq!(whole(&gzip(&tar), 1 << 20), Some(tar));
    }

    #[test]
    fn data_without_the_closing_blocks_is_left_to_the_stream_reader() {
        assert_eq!(whole(&gzip(b"not closed"), 1 << 20), None);
    }

    #[test]
    fn a_size_hint_above_the_limit_is_not_allocated() {
        assert_eq!(whole(&gzip(&closed_tar(b"x")), 100), None);
    }

    #[test]
    fn a_size_hint_that_is_too_small_falls_back() {
        let mut data = gzip(&closed_tar(b"x"));
        let at = data.len() - 4;
        data[at..].copy_from_slice(&10u32.to_le_bytes());
        assert_eq!(whole(&data, 1 << 20), None);
    }

    #[test]
    fn damaged_data_falls_back() {
        let mut data = gzip(&closed_tar(b"some bytes to damage"));
        data[12] ^= 0xff;
        assert_eq!(whole(&data, 1 << 20), None);
        assert_eq!(whole(&[0x1f, 0x8b], 1 << 20), None);
    }
}
