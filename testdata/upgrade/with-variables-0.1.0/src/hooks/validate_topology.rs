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

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<validate_topology>().build().unwrap()
    }

    #[tokio::test]
    async fn accepts_valid_variables_and_rejects_the_rest() {
        let mut request = ValidateTopologyRequest::new();
        request.variables.push(Variable { name: "imageRepository".into(), value: "registry.example.com".into() });
        let response = extension().call(ValidateTopology, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success, "{}", response.message);

        request.variables[0].value = 42.into();
        let response = extension().call(ValidateTopology, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Failure);
        assert!(response.message.contains("imageRepository"), "{}", response.message);
    }
}
