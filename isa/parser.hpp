#pragma once
#include "isa/ast.hpp"
