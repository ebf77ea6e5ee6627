"""The Placement route table: every URL and its methods on one screen (405 + Allow come
from it; path parameters carry no patterns, so a 404 comes from the resource with a
useful message)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import Service
from stackling.placement.api import (
    aggregates,
    allocation_candidates,
    allocations,
    inventories,
    reshaper,
    resource_classes,
    resource_providers,
    root,
    traits,
    usages,
)
from stackling.placement.microversions import SPEC

PREFIX = "/placement"


def build(runtime: Any) -> Service:
    s = Service("placement", PREFIX, "placement", microversions=SPEC)
    s.add("/", public=True, get=root.home)
    s.add("/resource_classes", get=resource_classes.list_classes,
          post=resource_classes.create_class)
    s.add("/resource_classes/{name}", get=resource_classes.show_class,
          put=resource_classes.update_class, delete=resource_classes.delete_class)
    s.add("/resource_providers", get=resource_providers.list_providers,
          post=resource_providers.create_provider)
    s.add("/resource_providers/{uuid}", get=resource_providers.show_provider,
          put=resource_providers.update_provider, delete=resource_providers.delete_provider)
    s.add("/resource_providers/{uuid}/inventories", get=inventories.list_inventories,
          post=inventories.create_inventory, put=inventories.set_inventories,
          delete=inventories.delete_inventories)
    s.add("/resource_providers/{uuid}/inventories/{resource_class}",
          get=inventories.show_inventory, put=inventories.update_inventory,
          delete=inventories.delete_inventory)
    s.add("/resource_providers/{uuid}/usages", get=usages.provider_usages)
    s.add("/resource_providers/{uuid}/aggregates", get=aggregates.get_aggregates,
          put=aggregates.set_aggregates)
    s.add("/resource_providers/{uuid}/allocations", get=allocations.list_for_provider)
    s.add("/resource_providers/{uuid}/traits", get=traits.list_provider_traits,
          put=traits.set_provider_traits, delete=traits.delete_provider_traits)
    s.add("/allocations", post=allocations.set_allocations)
    s.add("/allocations/{consumer_uuid}", get=allocations.list_for_consumer,
          put=allocations.set_for_consumer, delete=allocations.delete_for_consumer)
    s.add("/allocation_candidates", get=allocation_candidates.list_candidates)
    s.add("/traits", get=traits.list_traits)
    s.add("/traits/{name}", get=traits.show_trait, put=traits.put_trait,
          delete=traits.delete_trait)
    s.add("/usages", get=usages.project_usages)
    s.add("/reshaper", post=reshaper.reshape)
    return s
