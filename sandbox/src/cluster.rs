//! The API's semantics, independent of HTTP: create, read, update, patch and delete with
//! the API server's rules (names, namespaces, resourceVersion preconditions, generation,
//! status subresources, finalizers and graceful deletion, dry runs, managed fields).
//! HTTP handlers and the simulated controllers both go through here.

use std::sync::{Arc, RwLock};

use serde_json::{Map, Value, json};

use crate::fieldmanager;
use crate::meta;
use crate::patch::{self, PatchType};
use crate::resources::{Registry, ResourceDef};
use crate::rules;
use crate::schema::decode;
use crate::selector::{FieldSelector, LabelSelector};
use crate::settings::Settings;
use crate::status::{ApiError, ApiResult, Cause};
use crate::store::{Change, ObjectKey, Store, Write};

/// The sandbox's whole state: the resource types served and the objects.
pub struct Cluster {
    registry: RwLock<Registry>,
    pub store: Store,
    pub settings: Settings,
}

/// What a request is about.
#[derive(Debug, Clone)]
pub struct Target {
    pub def: Arc<ResourceDef>,
    pub version: String,
    /// `""` for cluster-scoped resources, or a list across all namespaces.
    pub namespace: String,
    /// `""` for the collection.
    pub name: String,
    /// `""`, `status`, `scale`, ...
    pub subresource: String,
}

impl Target {
    pub fn key(&self) -> ObjectKey {
        ObjectKey {
            resource: self.def.key(),
            namespace: if self.def.namespaced {
                self.namespace.clone()
            } else {
                String::new()
            },
            name: self.name.clone(),
        }
    }

    fn not_found(&self) -> ApiError {
        ApiError::not_found(&self.def.plural, &self.def.group, &self.name)
    }
}

/// `fieldValidation`: what to do with fields the schema does not know.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

/// Options every write takes.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    pub dry_run: bool,
    /// The field manager: `fieldManager`, or the client's user agent's program name.
    pub manager: String,
    pub validation: FieldValidation,
    /// Server-side apply's `force`.
    pub force: bool,
    /// Keys the request body repeats (see [`crate::body::duplicate_fields`]), which
    /// `validation` treats as it treats unknown fields.
    pub duplicates: Vec<String>,
}

/// A successful write.
#[derive(Debug, Clone)]
pub struct Written {
    pub object: Value,
    pub created: bool,
    pub warnings: Vec<String>,
    /// The resourceVersion committed (0 for dry runs and writes that changed nothing).
    pub rv: u64,
}

/// `DeleteOptions`.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub dry_run: bool,
    pub grace_period: Option<i64>,
    /// `Orphan`, `Background` or `Foreground`.
    pub propagation: Option<String>,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
}

/// The result of a delete: the object was removed, or is being deleted (finalizers,
/// graceful deletion) and is returned as it now is.
#[derive(Debug, Clone)]
pub enum Deleted {
    Gone(Value),
    Pending(Value),
}

/// `ListOptions`.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
}

impl Cluster {
    pub fn new(settings: Settings, store: Store) -> Arc<Cluster> {
        Arc::new(Cluster {
            registry: RwLock::new(Registry::with_builtins()),
            store,
            settings,
        })
    }

    pub fn registry(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        self.registry.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn registry_mut(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.registry.write().unwrap_or_else(|e| e.into_inner())
    }

    /// A target for an object named by apiVersion and kind (for controllers).
    pub fn target(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<Target> {
        let def = self.registry().for_object(api_version, kind)?;
        let version = crate::resources::split_api_version(api_version)
            .1
            .to_string();
        Some(Target {
            namespace: if def.namespaced {
                namespace.to_string()
            } else {
                String::new()
            },
            def,
            version,
            name: name.to_string(),
            subresource: String::new(),
        })
    }

    /// A target for a resource named by group and plural at its preferred version.
    pub fn resource(&self, group: &str, plural: &str, namespace: &str, name: &str) -> Target {
        let def = self
            .registry()
            .by_key(&format!("{group}/{plural}"))
            .unwrap_or_else(|| panic!("built-in resource {group}/{plural}"));
        Target {
            version: def.versions[0].clone(),
            namespace: if def.namespaced {
                namespace.to_string()
            } else {
                String::new()
            },
            def,
            name: name.to_string(),
            subresource: String::new(),
        }
    }

    // ---- reads ----

    pub fn get(&self, t: &Target) -> ApiResult<Value> {
        let object = self.store.get(&t.key()).ok_or_else(|| t.not_found())?;
        Ok(self.present(t, &object))
    }

    /// The stored object, unconverted.
    pub fn get_raw(&self, t: &Target) -> Option<Arc<Value>> {
        self.store.get(&t.key())
    }

    /// An object as served at the target's version, for its subresource.
    pub fn present(&self, t: &Target, object: &Value) -> Value {
        let mut out = crate::convert::to_version(&t.def, object, &t.version);
        if t.subresource == "scale" {
            out = crate::scale::to_scale(&t.def, &out);
        }
        out
    }

    pub fn list(&self, t: &Target, opts: &ListOptions) -> ApiResult<Value> {
        opts.fields.check_supported(&t.def.group, &t.def.plural)?;
        let ns = (t.def.namespaced && !t.namespace.is_empty()).then_some(t.namespace.as_str());
        let (objects, rv) = self.store.list(&t.def.key(), ns);
        let start_after = match &opts.continue_token {
            None => None,
            Some(token) => Some(decode_continue(token)?),
        };
        let mut items = Vec::new();
        let mut more = None;
        for object in objects {
            if let Some((after_ns, after_name)) = &start_after {
                let here = (meta::namespace(&object), meta::name(&object));
                if here <= (after_ns.as_str(), after_name.as_str()) {
                    continue;
                }
            }
            if !opts.labels.matches_object(&object)
                || !opts.fields.matches(&t.def.group, &t.def.plural, &object)
            {
                continue;
            }
            if opts.limit.is_some_and(|l| items.len() >= l) {
                more = Some(object);
                break;
            }
            items.push(object);
        }
        let mut list_meta = json!({ "resourceVersion": rv.to_string() });
        if more.is_some()
            && let Some(last) = items.last()
        {
            list_meta["continue"] =
                json!(encode_continue(meta::namespace(last), meta::name(last), rv));
        }
        let custom = t.def.custom.is_some();
        let items: Vec<Value> = items
            .iter()
            .map(|o| {
                let mut v = self.present(t, o);
                if !custom && let Some(m) = v.as_object_mut() {
                    // Built-in lists leave kind and apiVersion off their items.
                    m.shift_remove("kind");
                    m.shift_remove("apiVersion");
                }
                v
            })
            .collect();
        Ok(json!({
            "kind": format!("{}List", t.def.kind),
            "apiVersion": t.def.api_version(&t.version),
            "metadata": list_meta,
            "items": items,
        }))
    }

    // ---- writes ----

    /// POST: creates the object in `body`.
    pub fn create(&self, t: &Target, body: Value, opts: &WriteOptions) -> ApiResult<Written> {
        let mut object = self.check_body(t, body)?;
        if let Some(m) = type_error(t, &object, decode::json_error) {
            return Err(decode_error(t, m));
        }
        let def = &t.def;
        if def.namespaced {
            self.check_namespace_open(t)?;
        }
        let name = meta::name(&object).to_string();
        let generate = meta::meta(&object)
            .and_then(|m| m.get("generateName"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut warnings = Vec::new();
        self.check_fields(t, &mut object, opts, &mut warnings, |m| decode_error(t, m))?;
        if name.is_empty() && generate.is_empty() {
            return Err(ApiError::invalid(
                &def.kind,
                &def.group,
                "",
                vec![Cause::required(
                    "metadata.name",
                    "name or generateName is required",
                )],
            ));
        }
        rules::prepare_create(def, &mut object);
        crate::controllers::admission::on_create(self, t, &mut object)?;
        for attempt in 0..8 {
            let name = if name.is_empty() {
                meta::generate_name(&generate)
            } else {
                name.clone()
            };
            let mut candidate = object.clone();
            meta::meta_mut(&mut candidate).insert("name".into(), json!(name));
            let target = Target {
                name: name.clone(),
                ..t.clone()
            };
            let key = target.key();
            let outcome = self.commit(&key, opts.dry_run, |current, _rv| {
                if current.is_some() {
                    return Err(ApiError::already_exists(&def.plural, &def.group, &name));
                }
                let mut new = candidate;
                self.finish(&target, None, &mut new, opts, "Update", &mut warnings)?;
                Ok(Write::Put(new))
            });
            match outcome {
                Err(e)
                    if e.reason == "AlreadyExists"
                        && name != meta::name(&object)
                        && attempt < 7 =>
                {
                    continue;
                }
                Err(e) => return Err(e),
                Ok((object, rv)) => {
                    return Ok(Written {
                        object: self.present(t, &object),
                        created: true,
                        warnings,
                        rv,
                    });
                }
            }
        }
        Err(ApiError::internal("could not generate a unique name"))
    }

    /// PUT: replaces the object (or its status or scale) with `body`.
    pub fn update(&self, t: &Target, body: Value, opts: &WriteOptions) -> ApiResult<Written> {
        if t.subresource == "scale" {
            return self.update_scale(t, body, opts);
        }
        // The decoder's type checks, then the name and namespace against the URL, in the
        // API server's order and words.
        if let Value::Object(m) = &body
            && let Some(e) = crate::body::type_mismatch(&self.registry(), t, m)
        {
            return Err(e);
        }
        if let Some(m) = type_error(t, &body, decode::json_error) {
            return Err(decode_error(t, m));
        }
        let body_name = meta::name(&body);
        if body_name != t.name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({})",
                t.name
            )));
        }
        let body_namespace = meta::namespace(&body);
        if t.def.namespaced && !body_namespace.is_empty() && body_namespace != t.namespace {
            return Err(ApiError::bad_request(format!(
                "the namespace of the object ({body_namespace}) does not match the namespace on the request ({})",
                t.namespace
            )));
        }
        let mut body = self.check_body(t, body)?;
        let mut warnings = Vec::new();
        self.check_fields(t, &mut body, opts, &mut warnings, |m| decode_error(t, m))?;
        let (object, rv) = self.commit(&t.key(), opts.dry_run, |current, _| {
            let current = current.ok_or_else(|| t.not_found())?;
            check_rv(t, current, meta::resource_version(&body))?;
            let mut new = body;
            self.merge_for_subresource(t, current, &mut new);
            self.finish(t, Some(current), &mut new, opts, "Update", &mut warnings)?;
            Ok(self.put_or_finalize(t, current, new))
        })?;
        Ok(Written {
            object: self.present(t, &object),
            created: false,
            warnings,
            rv,
        })
    }

    /// PATCH in any of the four types; server-side apply may create the object.
    pub fn patch(
        &self,
        t: &Target,
        kind: PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let patch_doc = patch::parse_body(kind, body)?;
        if kind == PatchType::Apply {
            if opts.manager.is_empty() {
                return Err(ApiError::bad_request(
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                ));
            }
            return self.apply(t, patch_doc, opts);
        }
        if opts.force {
            return Err(ApiError::bad_request(
                "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch",
            ));
        }
        let mut warnings = Vec::new();
        let (object, rv) = self.commit(&t.key(), opts.dry_run, |current, _| {
            let current = current.ok_or_else(|| t.not_found())?;
            let served = self.present(t, current);
            let mut new = match kind {
                PatchType::Json => patch::json_patch(&served, &patch_doc)?,
                PatchType::Merge => patch::merge_patch(&served, &patch_doc),
                PatchType::Strategic => {
                    if t.def.custom.is_some() {
                        return Err(ApiError::unsupported_patch_type(true));
                    }
                    patch::strategic_merge_patch(&t.def, &served, &patch_doc)?
                }
                PatchType::Apply => unreachable!("handled above"),
            };
            let patch_text = match kind {
                PatchType::Strategic => crate::patch::go_format(&patch_doc),
                _ => crate::patch::go_json(&new),
            };
            let invalid = |m| {
                ApiError::invalid(
                    "",
                    "",
                    "",
                    vec![Cause::invalid("patch", &json!(patch_text), m)],
                )
            };
            // The patched object decodes into the type as a JSON body does, or for a
            // strategic merge patch through the unstructured converter.
            let read = match kind {
                PatchType::Strategic => decode::converter_error,
                _ => decode::json_error,
            };
            if let Some(m) = type_error(t, &new, read) {
                return Err(invalid(m));
            }
            if t.subresource != "scale" {
                self.check_fields(t, &mut new, opts, &mut warnings, invalid)?;
            }
            new = self.check_body(t, new)?;
            if meta::name(&new) != t.name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({})",
                    meta::name(&new),
                    t.name
                )));
            }
            check_rv(t, current, meta::resource_version(&new))?;
            if t.subresource == "scale" {
                let mut scaled = (**current).clone();
                crate::scale::apply_scale(&t.def, &mut scaled, &new)?;
                new = scaled;
            } else {
                self.merge_for_subresource(t, current, &mut new);
            }
            self.finish(t, Some(current), &mut new, opts, "Update", &mut warnings)?;
            Ok(self.put_or_finalize(t, current, new))
        })?;
        Ok(Written {
            object: self.present(t, &object),
            created: false,
            warnings,
            rv,
        })
    }

    fn apply(&self, t: &Target, applied: Value, opts: &WriteOptions) -> ApiResult<Written> {
        // Types first: an applied object is typed before anything reads its metadata.
        fieldmanager::check_applied(&t.def, &applied, &t.def.api_version(&t.version))?;
        let applied = self.check_body(t, applied)?;
        let applied_name = meta::name(&applied);
        if applied_name != t.name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({applied_name}) does not match the name on the URL ({})",
                t.name
            )));
        }
        let exists = self.get_raw(t).is_some();
        if t.def.namespaced && !exists {
            self.check_namespace_open(t)?;
        }
        let api_version = t.def.api_version(&t.version);
        // An apply that creates goes through the same admission as a create (cluster IPs,
        // node ports, a pod's service account). Admission reads other objects, so it runs
        // here, before the store's lock, on the object the apply would create.
        let admitted = if exists {
            None
        } else {
            let mut probe = fieldmanager::apply(
                &t.def,
                None,
                &applied,
                &opts.manager,
                &api_version,
                &t.subresource,
                opts.force,
            )?;
            rules::prepare_create(&t.def, &mut probe);
            crate::controllers::admission::on_create(self, t, &mut probe)?;
            Some(probe)
        };
        let mut warnings = Vec::new();
        let mut created = false;
        let (object, rv) = self.commit(&t.key(), opts.dry_run, |current, _| {
            let served = current.map(|c| self.present(t, c));
            if let Some(current) = current {
                check_rv(t, current, meta::resource_version(&applied))?;
            }
            let mut new = fieldmanager::apply(
                &t.def,
                served.as_ref(),
                &applied,
                &opts.manager,
                &api_version,
                &t.subresource,
                opts.force,
            )?;
            match current {
                None => {
                    // Deleted since it was read: the caller retries, as the API server's
                    // patch handler does on a conflict.
                    let Some(admitted) = &admitted else {
                        return Err(ApiError::conflict(&t.def.plural, &t.def.group, &t.name));
                    };
                    created = true;
                    new = admitted.clone();
                    self.finish(t, None, &mut new, opts, "Apply", &mut warnings)?;
                    Ok(Write::Put(new))
                }
                Some(current) => {
                    self.merge_for_subresource(t, current, &mut new);
                    self.finish(t, Some(current), &mut new, opts, "Apply", &mut warnings)?;
                    Ok(self.put_or_finalize(t, current, new))
                }
            }
        })?;
        Ok(Written {
            object: self.present(t, &object),
            created,
            warnings,
            rv,
        })
    }

    fn update_scale(&self, t: &Target, body: Value, opts: &WriteOptions) -> ApiResult<Written> {
        if let Some(m) = type_error(t, &body, decode::json_error) {
            return Err(ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: {m}"
            )));
        }
        let mut warnings = Vec::new();
        let (object, rv) = self.commit(&t.key(), opts.dry_run, |current, _| {
            let current = current.ok_or_else(|| t.not_found())?;
            check_rv(t, current, meta::resource_version(&body))?;
            let mut new = (**current).clone();
            crate::scale::apply_scale(&t.def, &mut new, &body)?;
            self.finish(t, Some(current), &mut new, opts, "Update", &mut warnings)?;
            Ok(Write::Put(new))
        })?;
        Ok(Written {
            object: self.present(t, &object),
            created: false,
            warnings,
            rv,
        })
    }

    /// An internal read-modify-write (controllers, `finalize`): `change` edits the stored
    /// object as served at the target's version; spec, status and metadata may all change.
    /// Returns `None` when the object does not exist or `change` left it as it was.
    pub fn mutate(
        &self,
        t: &Target,
        manager: &str,
        change: impl FnOnce(&mut Value) -> bool,
    ) -> ApiResult<Option<Written>> {
        let opts = WriteOptions {
            manager: manager.to_string(),
            validation: FieldValidation::Ignore,
            ..WriteOptions::default()
        };
        let mut warnings = Vec::new();
        let mut missing = false;
        let direct = Target {
            subresource: String::new(),
            ..t.clone()
        };
        let (object, rv) = self
            .commit(&t.key(), false, |current, _| {
                let Some(current) = current else {
                    missing = true;
                    return Ok(Write::Unchanged);
                };
                let mut new = self.present(&direct, current);
                if !change(&mut new) {
                    return Ok(Write::Unchanged);
                }
                let finish_target = Target {
                    subresource: if t.subresource.is_empty() {
                        String::new()
                    } else {
                        t.subresource.clone()
                    },
                    ..direct.clone()
                };
                self.finish(
                    &finish_target,
                    Some(current),
                    &mut new,
                    &opts,
                    "Update",
                    &mut warnings,
                )?;
                Ok(self.put_or_finalize(&direct, current, new))
            })
            .or_else(|e| {
                if missing {
                    Ok((Value::Null, 0))
                } else {
                    Err(e)
                }
            })?;
        if missing || rv == 0 {
            return Ok(None);
        }
        Ok(Some(Written {
            object: self.present(&direct, &object),
            created: false,
            warnings,
            rv,
        }))
    }

    /// DELETE of one object.
    pub fn delete(&self, t: &Target, opts: &DeleteOptions) -> ApiResult<(Deleted, u64)> {
        let mut pending = false;
        let (object, rv) = self.commit_keep(&t.key(), opts.dry_run, |current, _| {
            let current = current.ok_or_else(|| t.not_found())?;
            if let Some(uid) = &opts.precondition_uid
                && uid != meta::uid(current)
            {
                return Err(ApiError::conflict(&t.def.plural, &t.def.group, &t.name).with_message(format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta::uid(current)
                )));
            }
            if let Some(rv) = &opts.precondition_rv
                && rv != meta::resource_version(current)
            {
                return Err(ApiError::conflict(&t.def.plural, &t.def.group, &t.name).with_message(format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    meta::resource_version(current)
                )));
            }
            let mut new = (**current).clone();
            let mut finalizers = meta::finalizers(&new);
            let propagation = opts
                .propagation
                .clone()
                .unwrap_or_else(|| rules::default_propagation(&t.def).to_string());
            match propagation.as_str() {
                "Foreground" => add_finalizer(&mut finalizers, "foregroundDeletion"),
                "Orphan" => add_finalizer(&mut finalizers, "orphan"),
                "Background" => {}
                other => {
                    return Err(ApiError::invalid(
                        "DeleteOptions",
                        "",
                        "",
                        vec![Cause::not_supported(
                            "propagationPolicy",
                            &json!(other),
                            &["Foreground", "Background", "Orphan"],
                        )],
                    ));
                }
            }
            let graceful = rules::graceful_deletion(&t.def, current, opts.grace_period);
            let namespace_finalizers = t.def.group.is_empty()
                && t.def.plural == "namespaces"
                && current["spec"]["finalizers"].as_array().is_some_and(|f| !f.is_empty());
            if finalizers.is_empty() && graceful.is_none() && !namespace_finalizers {
                return Ok(Write::Delete);
            }
            pending = true;
            if meta::is_deleting(current) {
                // Already being deleted: only the finalizers asked for now are added,
                // and a shorter grace period cuts the wait (a pod's kubelet ends it
                // with a zero grace period).
                let current_grace = current["metadata"]["deletionGracePeriodSeconds"]
                    .as_i64()
                    .unwrap_or(0);
                let asked = graceful.unwrap_or(0);
                if asked < current_grace {
                    let m = meta::meta_mut(&mut new);
                    let when = chrono::Utc::now() + chrono::Duration::seconds(asked);
                    m.insert(
                        "deletionTimestamp".into(),
                        json!(when.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
                    );
                    m.insert("deletionGracePeriodSeconds".into(), json!(asked));
                    if finalizers.is_empty() && asked == 0 {
                        return Ok(Write::Delete);
                    }
                } else if finalizers == meta::finalizers(current) {
                    return Ok(Write::Unchanged);
                }
            } else {
                let m = meta::meta_mut(&mut new);
                let grace = graceful.unwrap_or(0);
                let when = chrono::Utc::now() + chrono::Duration::seconds(grace);
                m.insert(
                    "deletionTimestamp".into(),
                    json!(when.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
                );
                m.insert("deletionGracePeriodSeconds".into(), json!(grace));
                rules::on_deletion_started(&t.def, &mut new);
            }
            meta::set_finalizers(&mut new, &finalizers);
            Ok(Write::Put(new))
        })?;
        let presented = self.present(t, &object);
        let deleted = if pending {
            Deleted::Pending(presented)
        } else {
            Deleted::Gone(presented)
        };
        Ok((deleted, rv))
    }

    /// DELETE of a collection: every object the selectors match, one by one.
    pub fn delete_collection(
        &self,
        t: &Target,
        list: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<Value> {
        let listed = self.list(t, list)?;
        let mut items = Vec::new();
        for item in listed["items"].as_array().cloned().unwrap_or_default() {
            let target = Target {
                namespace: meta::namespace(&item).to_string(),
                name: meta::name(&item).to_string(),
                ..t.clone()
            };
            match self.delete(&target, opts) {
                Ok((Deleted::Gone(o) | Deleted::Pending(o), _)) => items.push(o),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        let mut out = listed;
        out["items"] = Value::Array(items);
        Ok(out)
    }

    // ---- helpers ----

    /// Runs a write and returns the object as stored and the resourceVersion committed
    /// (which the caller waits to be durable before answering).
    fn commit(
        &self,
        key: &ObjectKey,
        dry_run: bool,
        write: impl FnOnce(Option<&Arc<Value>>, u64) -> ApiResult<Write>,
    ) -> ApiResult<(Value, u64)> {
        self.commit_keep(key, dry_run, write)
    }

    /// Like `commit`, and a deleted object is returned as it was.
    fn commit_keep(
        &self,
        key: &ObjectKey,
        dry_run: bool,
        write: impl FnOnce(Option<&Arc<Value>>, u64) -> ApiResult<Write>,
    ) -> ApiResult<(Value, u64)> {
        if dry_run {
            let current = self.store.get(key);
            return match write(current.as_ref(), 0)? {
                Write::Put(mut v) => {
                    meta::meta_mut(&mut v).insert(
                        "resourceVersion".into(),
                        json!(current.as_deref().map(meta::resource_version).unwrap_or("")),
                    );
                    Ok((v, 0))
                }
                Write::Delete | Write::Unchanged => {
                    Ok((current.map(|c| (*c).clone()).unwrap_or(Value::Null), 0))
                }
            };
        }
        let mut unchanged = None;
        let change = self.store.write(key, |current, rv| {
            let outcome = write(current, rv)?;
            if matches!(outcome, Write::Unchanged) {
                unchanged = current.cloned();
            }
            Ok(outcome)
        })?;
        match change {
            Some(Change {
                rv,
                object,
                previous,
                ..
            }) => {
                let v = object.or(previous).expect("a change has an object");
                Ok(((*v).clone(), rv))
            }
            None => match unchanged.or_else(|| self.store.get(key)) {
                Some(v) => Ok(((*v).clone(), 0)),
                None => Err(ApiError::not_found(&key.resource, "", &key.name)),
            },
        }
    }

    /// Checks a request body's kind, apiVersion and namespace against the target, and
    /// fills them in.
    fn check_body(&self, t: &Target, body: Value) -> ApiResult<Value> {
        let Value::Object(mut map) = body else {
            return Err(ApiError::bad_request(
                "the body of the request was not a JSON object",
            ));
        };
        let (want_kind, want_api) = if t.subresource == "scale" {
            ("Scale", crate::scale::scale_api_version(&t.def))
        } else {
            (t.def.kind.as_str(), t.def.api_version(&t.version))
        };
        if t.subresource.is_empty()
            && let Some(e) = crate::body::type_mismatch(&self.registry(), t, &map)
        {
            return Err(e);
        }
        match map.get("apiVersion").and_then(Value::as_str) {
            None | Some("") => {
                map.insert("apiVersion".into(), json!(want_api));
            }
            Some(v) if v != want_api => {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({v}) does not match the expected API version ({want_api})"
                )));
            }
            Some(_) => {}
        }
        match map.get("kind").and_then(Value::as_str) {
            None | Some("") => {
                map.insert("kind".into(), json!(want_kind));
            }
            Some(k) if k != want_kind => {
                return Err(ApiError::bad_request(format!(
                    "the kind in the data ({k}) does not match the expected kind ({want_kind})"
                )));
            }
            Some(_) => {}
        }
        let mut object = Value::Object(map);
        if !object.get("metadata").is_none_or(Value::is_object) {
            return Err(ApiError::bad_request("metadata: must be an object"));
        }
        let ns = meta::namespace(&object).to_string();
        if t.def.namespaced {
            if !ns.is_empty() && ns != t.namespace {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            meta::meta_mut(&mut object).insert("namespace".into(), json!(t.namespace));
        } else {
            meta::meta_mut(&mut object).remove("namespace");
        }
        Ok(object)
    }

    fn check_namespace_open(&self, t: &Target) -> ApiResult<()> {
        let ns_target = self.resource("", "namespaces", "", &t.namespace);
        match self.store.get(&ns_target.key()) {
            None => Err(ApiError::not_found("namespaces", "", &t.namespace)),
            Some(ns) if meta::is_deleting(&ns) => Err(ApiError::forbidden(
                &t.def.plural,
                &t.def.group,
                &t.name,
                &format!(
                    "unable to create new content in namespace {} because it is being terminated",
                    t.namespace
                ),
            )),
            Some(_) => Ok(()),
        }
    }

    /// For writes to the main resource of a type with a status subresource, the status
    /// stays as it was; for writes to `/status`, only the status changes.
    fn merge_for_subresource(&self, t: &Target, current: &Value, new: &mut Value) {
        let current = crate::convert::to_version(&t.def, current, &t.version);
        match t.subresource.as_str() {
            "status" => {
                let status = new.get("status").cloned();
                let mut kept = current.clone();
                match status {
                    Some(s) => kept["status"] = s,
                    None => {
                        if let Some(m) = kept.as_object_mut() {
                            m.shift_remove("status");
                        }
                    }
                }
                // Metadata other than labels, annotations and finalizers stays too.
                rules::keep_metadata_for_status(&mut kept, new);
                *new = kept;
            }
            "" if t.def.has_status() => match current.get("status") {
                Some(s) => new["status"] = s.clone(),
                None => {
                    if let Some(m) = new.as_object_mut() {
                        m.shift_remove("status");
                    }
                }
            },
            _ => {}
        }
    }

    /// Completes an object before it is stored: system metadata, generation, defaults,
    /// validation, managed fields, and the storage version.
    fn finish(
        &self,
        t: &Target,
        current: Option<&Arc<Value>>,
        new: &mut Value,
        opts: &WriteOptions,
        operation: &str,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let def = &t.def;
        let served_current = current.map(|c| crate::convert::to_version(def, c, &t.version));
        {
            let m = meta::meta_mut(new);
            match current {
                None => {
                    m.insert("uid".into(), json!(meta::new_uid()));
                    m.insert("creationTimestamp".into(), json!(meta::now()));
                    for k in [
                        "deletionTimestamp",
                        "deletionGracePeriodSeconds",
                        "selfLink",
                    ] {
                        m.remove(k);
                    }
                    if def.tracks_generation() {
                        m.insert("generation".into(), json!(1));
                    } else {
                        m.remove("generation");
                    }
                }
                Some(current) => {
                    let cm = meta::meta(current).cloned().unwrap_or_default();
                    for k in [
                        "uid",
                        "creationTimestamp",
                        "deletionTimestamp",
                        "deletionGracePeriodSeconds",
                        "generation",
                        "generateName",
                    ] {
                        match cm.get(k) {
                            Some(v) => {
                                m.insert(k.into(), v.clone());
                            }
                            None => {
                                m.remove(k);
                            }
                        }
                    }
                    m.remove("selfLink");
                }
            }
            m.remove("resourceVersion");
        }
        rules::apply_defaults(def, &t.version, new);
        if let Some(cur) = &served_current {
            crate::controllers::admission::on_update(t, cur, new);
        }
        if let Some(cur) = &served_current
            && def.tracks_generation()
            && t.subresource.is_empty()
            && spec_changed(cur, new)
        {
            let g = cur["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            meta::meta_mut(new).insert("generation".into(), json!(g));
        }
        let mut causes = rules::validate_metadata(def, new);
        causes.extend(rules::validate(
            def,
            &t.version,
            new,
            served_current.as_ref(),
        ));
        if def.custom.is_some() {
            let found = crate::crd::validate_custom(def, new, served_current.as_ref());
            causes.extend(found.causes);
            // A write retried after a conflict finishes again: one warning each.
            for w in found.warnings {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        if let Some(cur) = &served_current {
            causes.extend(rules::validate_update(def, cur, new, &t.subresource));
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid(
                &def.kind,
                &def.group,
                meta::name(new),
                causes,
            ));
        }
        if operation != "Apply" {
            fieldmanager::record_update(
                def,
                served_current.as_ref(),
                new,
                if opts.manager.is_empty() {
                    "unknown"
                } else {
                    &opts.manager
                },
                &def.api_version(&t.version),
                &t.subresource,
            );
        }
        *new = crate::convert::to_storage(def, new, &t.version);
        if let Some(cur) = current
            && same_object(cur, new)
        {
            // Nothing but bookkeeping changed: keep the stored object.
            *new = (**cur).clone();
        }
        Ok(())
    }

    /// Fields of a request's object the type does not know: warnings, or under
    /// `fieldValidation=Strict` the error `strict` words; either way they are dropped (a
    /// custom resource's pruning, what decoding into a built-in type does).
    fn check_fields(
        &self,
        t: &Target,
        object: &mut Value,
        opts: &WriteOptions,
        warnings: &mut Vec<String>,
        strict: impl FnOnce(String) -> ApiError,
    ) -> ApiResult<()> {
        let unknown = crate::schema::unknown_fields(&t.def, &t.version, object);
        let errors: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .chain(
                opts.duplicates
                    .iter()
                    .map(|f| format!("duplicate field \"{f}\"")),
            )
            .collect();
        if !errors.is_empty() {
            match opts.validation {
                FieldValidation::Strict => {
                    return Err(strict(format!(
                        "strict decoding error: {}",
                        errors.join(", ")
                    )));
                }
                FieldValidation::Warn => warnings.extend(errors),
                FieldValidation::Ignore => {}
            }
        }
        if !unknown.is_empty() {
            crate::schema::prune_unknown(&t.def, &t.version, object);
        }
        Ok(())
    }

    /// A write that leaves a deleting object with no finalizers removes it.
    fn put_or_finalize(&self, _t: &Target, current: &Value, new: Value) -> Write {
        if same_object(current, &new) {
            return Write::Unchanged;
        }
        if meta::is_deleting(&new)
            && meta::finalizers(&new).is_empty()
            && !rules::waits_for_grace(&new)
        {
            return Write::Delete;
        }
        Write::Put(new)
    }
}

impl ApiError {
    fn with_message(mut self, message: String) -> ApiError {
        self.message = message;
        self
    }
}

/// What decoding `object` into the built-in type a write to `t` carries reports, in
/// `read`'s words; custom resources decode as unstructured objects.
fn type_error(
    t: &Target,
    object: &Value,
    read: fn(&crate::schema::Node<'_>, &Value) -> Option<String>,
) -> Option<String> {
    let node = crate::schema::decoded_type(&t.def, &t.version, &t.subresource)?;
    read(&node, object)
}

/// How the API server words a body it could not decode into the type.
fn decode_error(t: &Target, message: String) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version \"{}\" cannot be handled as a {kind}: {message}",
        t.version,
        kind = t.def.kind
    ))
}

fn add_finalizer(finalizers: &mut Vec<String>, name: &str) {
    if !finalizers.iter().any(|f| f == name) {
        finalizers.push(name.to_string());
    }
}

fn check_rv(t: &Target, current: &Value, given: &str) -> ApiResult<()> {
    if given.is_empty() || given == meta::resource_version(current) {
        return Ok(());
    }
    if given.parse::<u64>().is_err() {
        // The storage layer parses it and fails with Go's error, which the API server
        // has no status for.
        let why = if given.bytes().all(|b| b.is_ascii_digit()) {
            "value out of range"
        } else {
            "invalid syntax"
        };
        return Err(ApiError::unknown(format!(
            "strconv.ParseUint: parsing {given:?}: {why}"
        )));
    }
    Err(ApiError::conflict(&t.def.plural, &t.def.group, &t.name))
}

/// Whether anything but metadata and status differs.
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Map<String, Value> {
        let mut m = v.as_object().cloned().unwrap_or_default();
        for k in ["metadata", "status", "kind", "apiVersion"] {
            m.shift_remove(k);
        }
        m
    };
    strip(old) != strip(new)
}

/// Equal but for resourceVersion and the timestamps of managed fields.
fn same_object(a: &Value, b: &Value) -> bool {
    let clean = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.shift_remove("resourceVersion");
            if let Some(Value::Array(fields)) = m.get_mut("managedFields") {
                for f in fields {
                    if let Some(f) = f.as_object_mut() {
                        f.shift_remove("time");
                    }
                }
            }
        }
        v
    };
    clean(a) == clean(b)
}

fn encode_continue(namespace: &str, name: &str, rv: u64) -> String {
    use base64::Engine as _;
    let token =
        json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{namespace}/{name}\u{0}")});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

fn decode_continue(token: &str) -> ApiResult<(String, String)> {
    use base64::Engine as _;
    let bad = || ApiError::bad_request("invalid continue token: continue key is not valid");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let start = v["start"]
        .as_str()
        .ok_or_else(bad)?
        .trim_end_matches('\u{0}');
    let (ns, name) = start.split_once('/').ok_or_else(bad)?;
    Ok((ns.to_string(), name.to_string()))
}
