"""OS::Heat::SoftwareConfig, StructuredConfig, CloudConfig, MultipartMime (configs in the
software config API) and OS::Heat::SoftwareDeployment, StructuredDeployment,
SoftwareDeploymentGroup (deployments of a config to servers).

A deployment is a persisted wait: with `NO_SIGNAL` it completes at once; with any other
transport it is IN_PROGRESS until signalled through the API (`PUT
/software_deployments/{id}` with a status, or a resource signal with the server's
outputs), which the engine's poll reads from the deployment's row."""

from __future__ import annotations

import json
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

import yaml

from stackling.orchestration import software
from stackling.orchestration.errors import ResourceFailure
from stackling.orchestration.properties import Constraint, Property
from stackling.orchestration.resources.base import Resource, register
from stackling.orchestration.software_models import SoftwareConfig as ConfigRow

IO_SCHEMA = {"name": Property("string", "Name of the input or output.", required=True),
             "description": Property("string", "Description."),
             "type": Property("string", "Type of the value.", default="String",
                              constraints=[Constraint("allowed_values", [
                                  "String", "Number", "CommaDelimitedList", "Json",
                                  "Boolean"])]),
             "default": Property("any", "Default value."),
             "replace_on_change": Property("boolean", "Replace the deployment on change.",
                                           default=False),
             "error_output": Property("boolean", "Whether a value here is an error.",
                                      default=False)}
TRANSPORTS = ["CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL", "ZAQAR_SIGNAL"]
DEPLOY_INPUTS = ("deploy_server_id", "deploy_action", "deploy_stack_id",
                 "deploy_resource_name", "deploy_signal_transport")


class ConfigResource(Resource):
    """A software config made from the properties; its physical id is the config's."""

    attributes_schema = {"config": "The config value of the software config."}

    def config_value(self) -> Any:
        return self.properties.get("config")

    def handle_create(self) -> None:
        p = self.properties
        row = software.create_config(self.db, self.ctx, {
            "name": self.physical_resource_name(), "group": p.get("group") or
            software.DEFAULT_GROUP, "config": self.config_value(),
            "options": p.get("options") or {}, "inputs": p.get("inputs") or [],
            "outputs": p.get("outputs") or []})
        self.set_resource_id(row.id)

    def handle_delete(self) -> None:
        row = self.db.get(ConfigRow, self.resource_id) if self.resource_id else None
        if row is not None:
            try:
                software.delete_config(self.db, self.ctx, row.id)
            except software.BadRequest:
                pass  # still deployed elsewhere: the config stays (configs are immutable)

    def attribute(self, name: str) -> Any:
        row = self.db.get(ConfigRow, self.resource_id)
        return row.config if row is not None else None


@register("OS::Heat::SoftwareConfig")
class SoftwareConfig(ConfigResource):
    properties_schema = {
        "group": Property("string", "Namespace to group this software config by when "
                          "delivered to a server.", default=software.DEFAULT_GROUP),
        "config": Property("string", "Configuration script or manifest which specifies "
                           "what actual configuration is performed."),
        "options": Property("map", "Map containing options specific to the configuration "
                            "management tool used by this resource."),
        "inputs": Property("list", "Schema representing the inputs that this software "
                           "config is expecting.", schema=IO_SCHEMA),
        "outputs": Property("list", "Schema representing the outputs that this software "
                            "config will produce.", schema=IO_SCHEMA),
    }


@register("OS::Heat::StructuredConfig")
class StructuredConfig(SoftwareConfig):
    properties_schema = {**SoftwareConfig.properties_schema,
                         "config": Property("map", "Map representing the configuration "
                                            "data structure which will be serialized to "
                                            "JSON format.")}


@register("OS::Heat::CloudConfig")
class CloudConfig(ConfigResource):
    properties_schema = {"cloud_config": Property(
        "map", "Map representing the cloud-config data structure which will be formatted "
        "as YAML.")}

    def config_value(self) -> Any:
        return "#cloud-config\n" + yaml.safe_dump(self.properties.get("cloud_config") or {},
                                                  default_flow_style=False)


@register("OS::Heat::MultipartMime")
class MultipartMime(ConfigResource):
    properties_schema = {
        "parts": Property("list", "Parts belonging to this message.", default=[], schema={
            "config": Property("string", "Content of part to attach, either inline or by "
                               "referencing the ID of another software config resource.",
                               required=True),
            "filename": Property("string", "Optional filename to associate with part."),
            "type": Property("string", "Whether the part content is text or multipart.",
                             default="text", constraints=[Constraint(
                                 "allowed_values", ["text", "multipart"])]),
            "subtype": Property("string", "Optional subtype to specify with the type.")}),
        "group": Property("string", "Namespace to group this software config by when "
                          "delivered to a server.", default=software.DEFAULT_GROUP),
    }

    def config_value(self) -> Any:
        message = MIMEMultipart()
        for part in self.properties.get("parts") or []:
            text = part["config"]
            row = self.db.get(ConfigRow, text)
            if row is not None and row.project_id == self.ctx.project_id:
                text = row.config if isinstance(row.config, str) else json.dumps(row.config)
            subtype = part.get("subtype") or ("x-shellscript" if str(text).startswith("#!")
                                              else "plain")
            text = str(text)
            charset = "us-ascii" if text.isascii() else "utf-8"  # ASCII stays readable
            item = MIMEText(text, subtype, charset)
            if part.get("filename"):
                item.add_header("Content-Disposition", "attachment",
                                filename=part["filename"])
            message.attach(item)
        return message.as_string()


def _substitute(value: Any, inputs: dict[str, Any], key: str) -> Any:
    """StructuredDeployment: `{<input_key>: name}` replaced by that input's value."""
    if isinstance(value, dict):
        if len(value) == 1 and key in value and isinstance(value[key], str):
            return inputs.get(value[key])
        return {k: _substitute(v, inputs, key) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, inputs, key) for v in value]
    return value


DEPLOYMENT_SCHEMA = {
    "config": Property("string", "ID of software configuration resource to execute when "
                       "applying to the server.", update_allowed=True),
    "input_values": Property("map", "Input values to apply to the software configuration "
                             "on this server.", default={}, update_allowed=True),
    "actions": Property("list", "Which lifecycle actions of the deployment resource will "
                        "result in this deployment being triggered.",
                        default=["CREATE", "UPDATE"], update_allowed=True,
                        schema=Property("string", constraints=[Constraint(
                            "allowed_values", ["CREATE", "UPDATE", "DELETE", "SUSPEND",
                                               "RESUME"])])),
    "signal_transport": Property("string", "How the server should signal to heat with the "
                                 "deployment output values.", default="CFN_SIGNAL",
                                 constraints=[Constraint("allowed_values", TRANSPORTS)]),
    "name": Property("string", "Name of the derived config associated with this "
                     "deployment."),
}


class DeploymentBase(Resource):
    """Shared by the single and the group deployment."""

    def _derived_config(self, server_id: str, action: str) -> str:
        p = self.properties
        source = self.db.get(ConfigRow, p.get("config")) if p.get("config") else None
        if p.get("config") and (source is None or source.project_id != self.ctx.project_id):
            raise ResourceFailure(f"Software config with id {p.get('config')} not found")
        values = dict(p.get("input_values") or {})
        extra = {"deploy_server_id": server_id, "deploy_action": action,
                 "deploy_stack_id": f"{self.scope.stack.name}/{self.scope.stack.id}",
                 "deploy_resource_name": self.name,
                 "deploy_signal_transport": p.get("signal_transport")}
        inputs = [dict(i) for i in (source.inputs if source else [])]
        inputs += [{"name": k, "type": "String", "value": v, "description": k}
                   for k, v in extra.items()]
        config = source.config if source else ""
        config = self.transform_config(config, values)
        row = software.create_config(self.db, self.ctx, {
            "name": p.get("name") or (source.name if source else self.name),
            "group": source.group if source else "Heat::Ungrouped", "config": config,
            "options": source.options if source else {}, "inputs": inputs,
            "outputs": source.outputs if source else []})
        return row.id

    def transform_config(self, config: Any, values: dict[str, Any]) -> Any:
        return config

    def _deploy(self, server_id: str, action: str) -> str:
        signalled = self.properties.get("signal_transport") != "NO_SIGNAL"
        row = software.create_deployment(self.db, self.ctx, {
            "config_id": self._derived_config(server_id, action), "server_id": server_id,
            "input_values": dict(self.properties.get("input_values") or {}),
            "action": action, "status": "IN_PROGRESS" if signalled else "COMPLETE",
            "status_reason": "Deploy data available" if signalled else "Not waiting for "
            "outputs signal"})
        return row.id

    def _check(self, deployment_id: str) -> bool:
        row = software.get_deployment(self.db, None, deployment_id)
        if row.status == "COMPLETE":
            return True
        if row.status == "FAILED":
            raise ResourceFailure(f"Deployment to server failed: {row.status_reason}")
        return False

    def _error_outputs(self, deployment_id: str) -> list[str]:
        dep = software.get_deployment(self.db, None, deployment_id)
        config = self.db.get(ConfigRow, dep.config_id)
        return [o["name"] for o in (config.outputs if config else []) if o.get("error_output")]

    def _outputs(self, deployment_id: str | None, name: str) -> Any:
        if deployment_id is None:
            return None
        try:
            row = software.get_deployment(self.db, None, deployment_id)
        except software.NotFound:
            return None
        return (row.output_values or {}).get(name)


@register("OS::Heat::SoftwareDeployment")
class SoftwareDeployment(DeploymentBase):
    properties_schema = {**DEPLOYMENT_SCHEMA, "server": Property(
        "string", "ID of resource to apply configuration to.", required=True)}
    dynamic_attributes = True  # the config's outputs are attributes too
    attributes_schema = {"deploy_stdout": "Captured stdout from the configuration execution.",
                         "deploy_stderr": "Captured stderr from the configuration execution.",
                         "deploy_status_code": "Returned status code from the configuration "
                                               "execution."}

    def _action(self, action: str) -> Any:
        if action not in (self.properties.get("actions") or []):
            return None
        if self.resource_id is None:
            dep_id = self._deploy(self.properties["server"], action)
            self.set_resource_id(dep_id)
        else:
            signalled = self.properties.get("signal_transport") != "NO_SIGNAL"
            software.update_deployment(self.db, None, self.resource_id, {
                "config_id": None, "input_values": dict(
                    self.properties.get("input_values") or {}),
                "action": action, "status": "IN_PROGRESS" if signalled else "COMPLETE",
                "status_reason": "Deploy data available"})
            dep = software.get_deployment(self.db, None, self.resource_id)
            dep.config_id = self._derived_config(self.properties["server"], action)
        return self.resource_id

    def handle_create(self) -> Any:
        token = self._action("CREATE")
        if token is None:  # not triggered on CREATE: the deployment exists, idle
            self.set_resource_id(software.create_deployment(self.db, self.ctx, {
                "config_id": self._derived_config(self.properties["server"], "CREATE"),
                "server_id": self.properties["server"], "action": "INIT",
                "status": "COMPLETE"}).id)
        return token

    def check_create_complete(self, token: Any) -> bool:
        return self._check(token)

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        return self._action("UPDATE")

    def check_update_complete(self, token: Any) -> bool:
        return self._check(token)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            dep = software.get_deployment(self.db, None, self.resource_id)
        except software.NotFound:
            return
        config_id = dep.config_id
        self.db.delete(dep)
        self.db.flush()
        derived = self.db.get(ConfigRow, config_id)
        if derived is not None:
            self.db.delete(derived)

    def handle_signal(self, details: Any) -> str:
        if self.resource_id is None:
            raise ResourceFailure("The deployment has not been created")
        return software.signal_deployment(self.db, self.resource_id, details,
                                          self._error_outputs(self.resource_id))

    def attribute(self, name: str) -> Any:
        return self._outputs(self.resource_id, name)

    def get_attribute(self, name: str) -> Any:
        if name not in self.attributes_schema and name != "show":
            # an output the config declares: any name resolves to the deployment's value
            return self._outputs(self.resource_id, name)
        return super().get_attribute(name)


@register("OS::Heat::StructuredDeployment")
class StructuredDeployment(SoftwareDeployment):
    properties_schema = {
        **SoftwareDeployment.properties_schema,
        "input_key": Property("string", "Name of key to use for substituting inputs during "
                              "deployment.", default="get_input"),
        "input_values_validate": Property("string", "Perform a check on the input values "
                                          "passed to verify that each required input has a "
                                          "corresponding value.", default="LAX",
                                          constraints=[Constraint("allowed_values",
                                                                  ["LAX", "STRICT"])]),
    }

    def transform_config(self, config: Any, values: dict[str, Any]) -> Any:
        if not isinstance(config, dict | list):
            return config
        if self.properties.get("input_values_validate") == "STRICT":
            missing = sorted(_wanted(config, self.properties["input_key"]) - set(values))
            if missing:
                raise ResourceFailure(f"Input values missing for: {', '.join(missing)}")
        return _substitute(config, values, self.properties.get("input_key") or "get_input")


def _wanted(value: Any, key: str) -> set[str]:
    if isinstance(value, dict):
        if len(value) == 1 and key in value and isinstance(value[key], str):
            return {value[key]}
        return set().union(*(_wanted(v, key) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_wanted(v, key) for v in value)) if value else set()
    return set()


@register("OS::Heat::SoftwareDeploymentGroup")
class SoftwareDeploymentGroup(DeploymentBase):
    """One deployment per server of `servers` (a map of names to server ids)."""

    properties_schema = {**DEPLOYMENT_SCHEMA, "servers": Property(
        "map", "A map of names and server IDs to apply configuration to.", required=True,
        update_allowed=True)}
    attributes_schema = {"deploy_stdouts": "A map of Nova names and captured stdouts.",
                         "deploy_stderrs": "A map of Nova names and captured stderrs.",
                         "deploy_status_codes": "A map of Nova names and returned status "
                                                "codes."}

    def handle_create(self) -> Any:
        self.set_resource_id(self.physical_resource_name())
        if "CREATE" not in (self.properties.get("actions") or []):
            return None
        deployments = {name: self._deploy(str(server), "CREATE") for name, server in
                       sorted((self.properties.get("servers") or {}).items())}
        self.data_set("deployments", deployments)
        return "deployments"

    def check_create_complete(self, token: Any) -> bool:
        return all([self._check(d) for d in (self.data_get("deployments") or {}).values()])

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        self.handle_delete()
        if "UPDATE" not in (self.properties.get("actions") or []):
            self.data_set("deployments", {})
            return None
        self.data_set("deployments", {name: self._deploy(str(server), "UPDATE") for name,
                                      server in sorted((self.properties.get("servers")
                                                        or {}).items())})
        return "deployments"

    def check_update_complete(self, token: Any) -> bool:
        return self.check_create_complete(token)

    def handle_delete(self) -> None:
        for dep_id in (self.data_get("deployments") or {}).values():
            try:
                dep = software.get_deployment(self.db, None, dep_id)
            except software.NotFound:
                continue
            config_id = dep.config_id
            self.db.delete(dep)
            self.db.flush()
            derived = self.db.get(ConfigRow, config_id)
            if derived is not None:
                self.db.delete(derived)

    def attribute(self, name: str) -> Any:
        key = {"deploy_stdouts": "deploy_stdout", "deploy_stderrs": "deploy_stderr",
               "deploy_status_codes": "deploy_status_code"}[name]
        return {n: self._outputs(d, key) for n, d in
                (self.data_get("deployments") or {}).items()}
