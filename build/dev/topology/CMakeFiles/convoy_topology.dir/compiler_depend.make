# Empty compiler generated dependencies file for convoy_topology.
# This may be replaced when dependencies are built.
