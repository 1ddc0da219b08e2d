//! The `validate-topology` handler: ValidateTopology.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

use crate::variables::Variables;

/// Answers ValidateTopology for with-variables.
#[hook(ValidateTopology, name = "validate-topology")]
pub async fn validate_topology(req: ValidateTopologyRequest) -> ValidateTopologyResponse {
    match req.variables::<Variables>() {
        Ok(_) => ValidateTopologyResponse::success(),
        Err(e) => ValidateTopologyResponse::failure(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "validate-topology";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<validate_topology>().build().unwrap();
        let request = ValidateTopologyRequest::new();
        let response = extension.call(ValidateTopology, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
