use onewayalloc::DeserializeIn;

#[derive(DeserializeIn)]
#[serde(tag = "type", rename_all = "camelCase")]
struct Request<'a> {
    #[serde(flatten)]
    rest: &'a str,
    #[serde(deny_unknown_fields, rename = "ok")]
    misplaced: u32,
    #[serde(deserialize_with = "parse", skip_serializing_if = "is_zero")]
    custom: u32,
}

#[derive(DeserializeIn)]
#[serde(rename_all = "Title Case")]
enum Shape {
    #[serde(default)]
    Unit,
    #[serde(untagged)]
    Other(u8),
}

#[derive(DeserializeIn)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
