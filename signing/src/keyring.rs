use pgp::composed::PublicOrSecret;

use crate::error::KeyError;
use crate::key::Key;

/// A set of OpenPGP keys read from a keyring file.
///
/// Reads what GnuPG exports and what Helm accepts as `--keyring`: binary packet streams
/// (`gpg --export`, `gpg --export-secret-keys`, legacy `pubring.gpg`/`secring.gpg`) and
/// ASCII-armored exports, including several armored blocks concatenated into one file.
/// Public and secret keys may be mixed; when both forms of one key are present the
/// secret one is kept.
#[derive(Debug, Default)]
pub struct Keyring {
    keys: Vec<Key>,
    skipped: Vec<String>,
}

const ARMOR_BEGIN: &str = "-----BEGIN PGP ";

impl Keyring {
    /// Reads a keyring from the bytes of a key file, armored or binary.
    ///
    /// Keys this library cannot use (an unsupported algorithm, a damaged packet) are
    /// skipped and described by [`Keyring::skipped`], as GnuPG and Helm skip them; it is an
    /// error only when no key at all can be read.
    pub fn from_bytes(data: &[u8]) -> Result<Self, KeyError> {
        let start = data
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .ok_or(KeyError::NoKeys)?;
        let data = &data[start..];
        if data.len() >= 12 && &data[8..12] == b"KBXf" {
            return Err(KeyError::Parse {
                reason: "this is a GnuPG keybox (pubring.kbx), not an exported keyring; export the keys with `gpg --export > keyring.gpg` and use that file".into(),
            });
        }
        let mut ring = Keyring::default();
        if data[0] & 0x80 != 0 {
            ring.read_packets(data);
        } else {
            let text = std::str::from_utf8(data).map_err(|_| KeyError::Parse {
                reason: "the file is neither binary OpenPGP data nor ASCII-armored text".into(),
            })?;
            ring.read_armored(text)?;
        }
        if ring.keys.is_empty() {
            return Err(match ring.skipped.into_iter().next() {
                Some(reason) => KeyError::Parse { reason },
                None => KeyError::NoKeys,
            });
        }
        Ok(ring)
    }

    fn read_armored(&mut self, text: &str) -> Result<(), KeyError> {
        let mut rest = text;
        let mut blocks = 0;
        while let Some(begin) = rest.find(ARMOR_BEGIN) {
            let block = &rest[begin..];
            let kind = block[ARMOR_BEGIN.len()..]
                .split("-----")
                .next()
                .unwrap_or_default()
                .to_owned();
            if kind != "PUBLIC KEY BLOCK" && kind != "PRIVATE KEY BLOCK" {
                return Err(KeyError::Parse {
                    reason: format!(
                        "expected a PUBLIC KEY BLOCK or PRIVATE KEY BLOCK, found a {kind}"
                    ),
                });
            }
            let end_marker = format!("-----END PGP {kind}-----");
            let end = block.find(&end_marker).ok_or_else(|| KeyError::Parse {
                reason: format!("armored block `BEGIN PGP {kind}` has no `{end_marker}` line"),
            })? + end_marker.len();
            blocks += 1;
            match PublicOrSecret::from_armor_many(&block.as_bytes()[..end]) {
                Ok((keys, _headers)) => self.add_all(keys),
                Err(e) => self
                    .skipped
                    .push(format!("armored block {blocks} is not readable: {e}")),
            }
            rest = &block[end..];
        }
        if blocks == 0 {
            return Err(KeyError::Parse {
                reason:
                    "no `-----BEGIN PGP PUBLIC KEY BLOCK-----` or `PRIVATE KEY BLOCK` in the text"
                        .into(),
            });
        }
        Ok(())
    }

    fn read_packets(&mut self, data: &[u8]) {
        match PublicOrSecret::from_bytes_many(data) {
            Ok(keys) => self.add_all(keys),
            Err(e) => self.skipped.push(format!("not OpenPGP key packets: {e}")),
        }
    }

    fn add_all(&mut self, keys: impl Iterator<Item = pgp::errors::Result<PublicOrSecret>>) {
        for key in keys {
            match key {
                Ok(PublicOrSecret::Public(k)) => self.add(Key::from_public(k)),
                Ok(PublicOrSecret::Secret(k)) => self.add(Key::from_secret(k)),
                Err(e) => self.skipped.push(format!("skipped an unreadable key: {e}")),
            }
        }
    }

    /// Adds a key; a second copy of a key already present replaces the first only when it
    /// brings the secret key.
    pub fn add(&mut self, key: Key) {
        match self
            .keys
            .iter_mut()
            .find(|k| k.fingerprint() == key.fingerprint())
        {
            Some(existing) if !existing.has_secret() && key.has_secret() => *existing = key,
            Some(_) => {}
            None => self.keys.push(key),
        }
    }

    /// The keys, in file order.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// Why keys in the file were left out, one message per skipped key or block.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// Whether the keyring holds no keys.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The number of distinct keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Finds the one key matching `query`, which may be:
    ///
    /// - a fingerprint or key id (16 or 8 hex digits) of the primary key or a subkey,
    ///   with or without spaces and a `0x` prefix;
    /// - otherwise a user id: an exact match wins, else every key with a user id
    ///   containing `query` (a name, an email) is a candidate, as in `helm package --key`.
    ///
    /// More than one candidate is [`KeyError::Ambiguous`]; none is [`KeyError::NotFound`].
    pub fn find(&self, query: &str) -> Result<&Key, KeyError> {
        let hex: String = query
            .trim()
            .trim_start_matches("0x")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let looks_hex =
            matches!(hex.len(), 8 | 16 | 40 | 64) && hex.chars().all(|c| c.is_ascii_hexdigit());
        if looks_hex {
            let by_hex: Vec<&Key> = self.keys.iter().filter(|k| k.matches_hex(&hex)).collect();
            if !by_hex.is_empty() {
                return one(query, by_hex);
            }
        }
        if let Some(key) = self
            .keys
            .iter()
            .find(|k| k.user_ids().iter().any(|u| u == query))
        {
            return Ok(key);
        }
        let containing = self
            .keys
            .iter()
            .filter(|k| k.user_ids().iter().any(|u| u.contains(query)))
            .collect();
        one(query, containing)
    }
}

fn one<'a>(query: &str, candidates: Vec<&'a Key>) -> Result<&'a Key, KeyError> {
    match candidates.as_slice() {
        [] => Err(KeyError::NotFound {
            query: query.to_owned(),
        }),
        [key] => Ok(key),
        many => Err(KeyError::Ambiguous {
            query: query.to_owned(),
            candidates: many
                .iter()
                .map(|k| format!("{} ({})", k.fingerprint(), k.user_id()))
                .collect(),
        }),
    }
}
