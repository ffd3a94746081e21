//! A position in a type's schema, read the way the API server's structured-merge-diff
//! reads its OpenAPI: structs and maps, lists (atomic, sets or maps keyed by fields),
//! scalars, and values of no declared type (deduced from the value itself).

use serde_json::{Map, Value};

/// What a value at a position is, for merging and tracking its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Atom {
    Scalar,
    List,
    /// A struct (declared fields) or a map (any keys), or both.
    Map,
    /// A value owned and replaced as a whole whatever its shape.
    Leaf,
}

/// How a list's items are told apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListKind<'a> {
    /// The list is one value.
    Atomic,
    /// Items are scalars, each its own identity.
    Set,
    /// Items are objects identified by these fields.
    Keyed(Vec<&'a str>),
}

#[derive(Debug, Clone, Copy)]
enum Target<'a> {
    /// A schema (resolved from a reference, or inline).
    Schema(&'a Value),
    /// No declared type: maps are granular, lists atomic, as deduced from the value.
    Deduced,
    /// No declared type, and the value is owned as a whole (`RawExtension`).
    Untyped,
    Scalar,
}

/// A position in a schema: the schema as written where it is used (which carries the
/// list and patch extensions) and what it resolves to.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    at: Option<&'a Value>,
    target: Target<'a>,
    /// Name of the definition `target` is, when it came from a reference.
    name: Option<&'a str>,
    defs: &'a Map<String, Value>,
    /// Unknown fields are kept (an `x-kubernetes-preserve-unknown-fields` above, in the
    /// same inline schema).
    preserve: bool,
    /// An object with kind, apiVersion and metadata (a resource's root or an embedded
    /// resource): its metadata is an ObjectMeta whatever the schema says.
    resource: bool,
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

fn reference(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .or_else(|| schema.get("allOf")?.as_array()?.first()?.get("$ref"))
        .and_then(Value::as_str)
}

fn truthy(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

impl<'a> Node<'a> {
    /// The root of a type: `schema` is a definition or a CustomResourceDefinition's
    /// `openAPIV3Schema`; references resolve in `defs`.
    pub fn root(
        schema: &'a Value,
        name: Option<&'a str>,
        defs: &'a Map<String, Value>,
    ) -> Node<'a> {
        let mut node = Node::at(schema, defs, false);
        if node.name.is_none() {
            node.name = name;
        }
        node.resource = true;
        node
    }

    /// A value of no declared type.
    pub fn deduced(defs: &'a Map<String, Value>) -> Node<'a> {
        Node {
            at: None,
            target: Target::Deduced,
            name: None,
            defs,
            preserve: true,
            resource: false,
        }
    }

    /// A value of no declared type, where references resolve as in `other`.
    pub fn deduced_like(other: &Node<'a>) -> Node<'a> {
        Node::deduced(other.defs)
    }

    fn synthetic(target: Target<'a>, defs: &'a Map<String, Value>) -> Node<'a> {
        Node {
            at: None,
            target,
            name: None,
            defs,
            preserve: false,
            resource: false,
        }
    }

    /// The node for a schema used at some position, inheriting `preserve` unless the
    /// schema is a reference (definitions stand alone).
    fn at(schema: &'a Value, defs: &'a Map<String, Value>, preserve: bool) -> Node<'a> {
        let (target, name, inherited) = match reference(schema) {
            Some(r) => {
                let name = r.rsplit('/').next().unwrap_or(r);
                let target = match name {
                    "io.k8s.apimachinery.pkg.api.resource.Quantity"
                    | "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Target::Scalar,
                    "io.k8s.apimachinery.pkg.runtime.RawExtension" => Target::Untyped,
                    // A CRD schema's free values (`enum`, `default`, `example`) and its
                    // either-or fields (`items`, `additionalProperties`, `dependencies`)
                    // take any JSON; k8s-openapi describes them as objects.
                    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"
                    | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray"
                    | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool"
                    | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray" => {
                        Target::Deduced
                    }
                    _ => match defs.get(name) {
                        Some(def) => Target::Schema(def),
                        None => Target::Deduced,
                    },
                };
                (target, Some(name), false)
            }
            None => (Target::Schema(schema), None, preserve),
        };
        let preserve = inherited
            || truthy(schema, "x-kubernetes-preserve-unknown-fields")
            || matches!(target, Target::Schema(t) if truthy(t, "x-kubernetes-preserve-unknown-fields"));
        let resource = truthy(schema, "x-kubernetes-embedded-resource");
        Node {
            at: Some(schema),
            target,
            name,
            defs,
            preserve,
            resource,
        }
    }

    fn schema(&self) -> Option<&'a Value> {
        match self.target {
            Target::Schema(s) => Some(s),
            _ => None,
        }
    }

    /// An extension, from where the schema is used or else from what it resolves to.
    pub fn extension(&self, key: &str) -> Option<&'a Value> {
        self.at
            .and_then(|a| a.get(key))
            .or_else(|| self.schema().and_then(|s| s.get(key)))
    }

    /// The definition's short name (`DeploymentSpec`), as Go errors name struct types.
    pub fn type_name(&self) -> &'a str {
        self.name
            .map(|n| n.rsplit('.').next().unwrap_or(n))
            .unwrap_or("")
    }

    /// The definition this node is, if it came from one.
    pub fn definition(&self) -> Option<&'a str> {
        self.name
    }

    fn declared_type(&self) -> Option<&'a str> {
        self.schema()?.get("type")?.as_str()
    }

    /// What a value here is; `value` decides for positions of no declared type.
    pub fn atom(&self, value: Option<&Value>) -> Atom {
        let by_value = || match value {
            Some(Value::Object(_)) => Atom::Map,
            Some(Value::Array(_)) => Atom::List,
            _ => Atom::Scalar,
        };
        match self.target {
            Target::Scalar => Atom::Scalar,
            Target::Untyped => Atom::Leaf,
            Target::Deduced => match by_value() {
                Atom::List => Atom::Leaf,
                other => other,
            },
            Target::Schema(s) => {
                if truthy(s, "x-kubernetes-int-or-string")
                    || self
                        .at
                        .is_some_and(|a| truthy(a, "x-kubernetes-int-or-string"))
                {
                    return Atom::Scalar;
                }
                match self.declared_type() {
                    Some("object") => Atom::Map,
                    Some("array") => Atom::List,
                    Some(_) => Atom::Scalar,
                    None if s.get("properties").is_some() => Atom::Map,
                    None => by_value(),
                }
            }
        }
    }

    /// How the items of a list here are identified.
    pub fn list_kind(&self) -> ListKind<'a> {
        if !matches!(self.target, Target::Schema(_)) {
            return ListKind::Atomic;
        }
        match self
            .extension("x-kubernetes-list-type")
            .and_then(Value::as_str)
        {
            Some("set") => return ListKind::Set,
            Some("map") => {
                let keys = self
                    .extension("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|k| k.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                return ListKind::Keyed(keys);
            }
            Some(_) => return ListKind::Atomic,
            None => {}
        }
        match self
            .extension("x-kubernetes-patch-strategy")
            .and_then(Value::as_str)
        {
            Some("merge" | "merge,retainKeys") => {
                match self
                    .extension("x-kubernetes-patch-merge-key")
                    .and_then(Value::as_str)
                {
                    Some(key) => ListKind::Keyed(vec![key]),
                    None => ListKind::Set,
                }
            }
            _ => ListKind::Atomic,
        }
    }

    /// Whether a map or struct here is owned as a whole.
    pub fn map_atomic(&self) -> bool {
        if matches!(self.target, Target::Untyped) {
            return true;
        }
        self.extension("x-kubernetes-map-type")
            .and_then(Value::as_str)
            == Some("atomic")
    }

    /// The declared fields of a struct here.
    pub fn properties(&self) -> Option<&'a Map<String, Value>> {
        self.schema()?.get("properties")?.as_object()
    }

    /// A declared field.
    pub fn field(&self, name: &str) -> Option<Node<'a>> {
        if self.resource {
            match name {
                "metadata" => {
                    if let Some(meta) = self.defs.get(OBJECT_META) {
                        let mut node = Node::at(meta, self.defs, false);
                        node.name = Some(OBJECT_META);
                        return Some(node);
                    }
                }
                "apiVersion" | "kind" => return Some(Node::synthetic(Target::Scalar, self.defs)),
                _ => {}
            }
        }
        let prop = self.properties()?.get(name)?;
        Some(Node::at(prop, self.defs, self.preserve))
    }

    /// The type of keys that are not declared fields: a map's values, or anything where
    /// unknown fields are kept. `None` where undeclared fields are not allowed.
    pub fn element(&self) -> Option<Node<'a>> {
        match self.target {
            Target::Deduced => return Some(Node::deduced(self.defs)),
            Target::Untyped => return Some(Node::synthetic(Target::Untyped, self.defs)),
            Target::Scalar => return None,
            Target::Schema(_) => {}
        }
        let s = self.schema()?;
        match s.get("additionalProperties") {
            Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(Node::deduced(self.defs)),
            Some(extra) => Some(Node::at(extra, self.defs, self.preserve)),
            None if self.preserve || self.properties().is_none_or(Map::is_empty) => {
                Some(Node::deduced(self.defs))
            }
            None => None,
        }
    }

    /// A declared field or else a map's value type.
    pub fn child(&self, name: &str) -> Option<Node<'a>> {
        self.field(name).or_else(|| self.element())
    }

    /// The type of a list's items.
    pub fn items(&self) -> Node<'a> {
        match self.schema().and_then(|s| s.get("items")) {
            Some(items) if items.is_object() => Node::at(items, self.defs, self.preserve),
            _ => Node::synthetic(Target::Untyped, self.defs),
        }
    }

    /// Strategic merge patch metadata where this field is declared: strategies and the
    /// merge key.
    pub fn patch_meta(&self) -> (Vec<&'a str>, &'a str) {
        let at = self.at;
        let strategies = at
            .and_then(|a| a.get("x-kubernetes-patch-strategy"))
            .and_then(Value::as_str)
            .map(|s| s.split(',').collect())
            .unwrap_or_default();
        let key = at
            .and_then(|a| a.get("x-kubernetes-patch-merge-key"))
            .and_then(Value::as_str)
            .unwrap_or("");
        (strategies, key)
    }

    /// Whether this position is a struct in the schema's sense (for strategic merge
    /// patch lookups, which only descend into structs).
    pub fn is_struct(&self) -> bool {
        self.properties().is_some() || matches!(self.target, Target::Deduced | Target::Untyped)
    }

    /// Whether this is a map of any keys (additionalProperties) rather than a struct.
    pub fn is_plain_map(&self) -> bool {
        self.properties().is_none()
            && self
                .schema()
                .is_some_and(|s| s.get("additionalProperties").is_some_and(Value::is_object))
    }

    /// The JSON type and format a schema declares here (`integer`, `int32`).
    pub fn declared_format(&self) -> (Option<&'a str>, Option<&'a str>) {
        let Some(s) = self.schema() else {
            return (None, None);
        };
        (
            s.get("type").and_then(Value::as_str),
            s.get("format").and_then(Value::as_str),
        )
    }

    /// Whether this is a scalar the schema gives no type of its own (a resource's
    /// `apiVersion` and `kind`).
    pub fn is_bare_scalar(&self) -> bool {
        matches!(self.target, Target::Scalar) && self.name.is_none()
    }

    /// Whether nothing is known here (unknown fields are all kept).
    pub fn is_deduced(&self) -> bool {
        matches!(self.target, Target::Deduced | Target::Untyped)
    }

    /// Whether unknown fields are kept at this position.
    pub fn preserves_unknown(&self) -> bool {
        self.preserve || self.is_deduced()
    }

    /// Whether this is an object with apiVersion, kind and metadata.
    pub fn is_resource(&self) -> bool {
        self.resource
    }

    /// The default of a field of a list item (the key of a keyed list may be left out
    /// when it has one).
    pub fn default_of(&self, field: &str) -> Option<&'a Value> {
        self.properties()?.get(field)?.get("default")
    }
}
