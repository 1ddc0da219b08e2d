//! The Docker and Dev templates of Cluster API's test module.

pub mod v1beta2;
